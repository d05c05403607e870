// Pattern: hashicorp/serf / memberlist event subscription. A subscriber
// goroutine registers its event channel in the coordinator's subscriber map
// under the coordinator lock, signals that it is ready, and from then on
// only consumes events. The coordinator broadcasts each event to every
// subscriber while holding its lock (so membership cannot change mid-fan-out).
//
// Why it is safe: the subscriber's only Lock happens before it closes
// `ready`, and the coordinator does not broadcast until every subscriber is
// ready. After that the subscriber is a pure receiver, so a broadcast
// blocked on a full subscriber channel with c.mu held is always drained.
package main

import (
	"fmt"
	"sync"
)

const eventBuf = 2

type memberEvent struct {
	kind string
	node string
}

type coordinator struct {
	mu          sync.Mutex
	subscribers map[string]chan memberEvent
	broadcasts  int
}

func (c *coordinator) broadcast(ev memberEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.broadcasts++
	for _, ch := range c.subscribers {
		ch <- ev
	}
}

func (c *coordinator) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, ch := range c.subscribers {
		close(ch)
		delete(c.subscribers, name)
	}
}

func (c *coordinator) subscribe(name string, ready chan<- struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	ch := make(chan memberEvent, eventBuf)
	c.mu.Lock()
	c.subscribers[name] = ch
	c.mu.Unlock()
	close(ready) // from here on: receive only, never lock

	alive := map[string]bool{}
	for ev := range ch {
		alive[ev.node] = ev.kind == "join"
	}
	n := 0
	for _, up := range alive {
		if up {
			n++
		}
	}
	fmt.Printf("%s: %d members alive\n", name, n)
}

func main() {
	c := &coordinator{subscribers: make(map[string]chan memberEvent)}
	var wg sync.WaitGroup
	var readies []chan struct{}
	for _, name := range []string{"dns", "health", "acl"} {
		ready := make(chan struct{})
		readies = append(readies, ready)
		wg.Add(1)
		go c.subscribe(name, ready, &wg)
	}
	for _, r := range readies {
		<-r
	}

	for i := 0; i < 10; i++ {
		c.broadcast(memberEvent{kind: "join", node: fmt.Sprintf("node-%d", i)})
	}
	for i := 0; i < 10; i += 3 {
		c.broadcast(memberEvent{kind: "leave", node: fmt.Sprintf("node-%d", i)})
	}
	c.shutdown()
	wg.Wait()
}
