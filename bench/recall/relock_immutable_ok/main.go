// immutable_ok models an in-process event bus in the style of
// asaskevich/EventBus / guava EventBus where listeners run synchronously
// under the bus lock.
// CORRECT: the listener uses the Event's back-pointer only to call
// Bus.Name() (returns an immutable field, no lock) and to load the atomic
// Published counter. It never calls Subscribe or Publish, so mu is never
// re-acquired while Publish holds it.
package main

import (
	"fmt"

	"example.com/recall/relock_immutable_ok/bus"
)

type printer struct {
	out []string
}

func (p *printer) OnEvent(ev bus.Event) {
	n := ev.Bus.Published.Load() // atomic, lock-free
	p.out = append(p.out, fmt.Sprintf("[%s #%d] %s", ev.Bus.Name(), n, ev.Topic))
}

func main() {
	b := bus.New("orders")
	p := &printer{}
	b.Subscribe(p)

	for _, t := range []string{"created", "paid", "shipped"} {
		b.Publish(t)
	}
	for _, line := range p.out {
		fmt.Println(line)
	}
}
