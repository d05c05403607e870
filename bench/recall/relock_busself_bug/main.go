// busself_bug models an in-process event bus (in the style of
// asaskevich/EventBus: a synchronous Publish that calls handlers with the
// bus lock held) where a listener subscribes a follow-up listener from
// inside its callback.
// BUGGY: bus.Bus.Publish locks b.mu and calls Listener.OnEvent(b, ev) under
// it (busself_bug/bus/bus.go:39). joinListener.OnEvent unconditionally
// calls b.Subscribe on the Bus it was handed, which locks the same
// sync.Mutex again on the same goroutine, so the first Publish deadlocks.
// The buggy listener is registered at busself_bug/main.go:34 (b.Subscribe).
package main

import (
	"fmt"

	"example.com/recall/relock_busself_bug/bus"
)

type chatLog struct{ lines []string }

func (c *chatLog) OnEvent(_ *bus.Bus, ev bus.Event) {
	c.lines = append(c.lines, ev.Payload)
}

type joinListener struct{ log *chatLog }

func (j *joinListener) OnEvent(b *bus.Bus, ev bus.Event) {
	// Lazily subscribe the room's chat log when the first user joins.
	b.Subscribe("room:"+ev.Payload, j.log) // re-locks b.mu
}

func main() {
	b := bus.New()
	log := &chatLog{}
	b.Subscribe("join", &joinListener{log: log}) // registers the re-entrant listener

	b.Publish(bus.Event{Topic: "join", Payload: "lobby"}) // deadlocks here
	b.Publish(bus.Event{Topic: "room:lobby", Payload: "hi"})
	fmt.Println(log.lines)
}
