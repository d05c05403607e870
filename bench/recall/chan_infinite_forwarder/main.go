// Pattern: eapache/channels InfiniteChannel (also used by e.g. libp2p /
// hashicorp code for event fan-out). The event bus publishes while holding
// its mutex onto a small input channel; a dedicated forwarder goroutine
// moves events into an unbounded in-memory queue and offers the head of the
// queue on the output channel via select. Subscribers on the output side do
// take the bus mutex. The forwarder takes the bus mutex only once, after the
// input channel has been closed, to record final stats.
//
// Why it is safe: while `in` is open the forwarder never blocks on anything
// but its select, whose `<-in` case is always enabled, so a publisher
// blocked on a full `in` with mu held is always drained. The forwarder's
// own Lock happens only after close(in), i.e. after the last send.
package main

import (
	"fmt"
	"sync"
)

const inputBuf = 4

type bus struct {
	mu        sync.Mutex
	closed    bool
	published int
	seen      map[string]int
	in        chan string
}

func (b *bus) Publish(topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.published++
	b.in <- topic
}

func (b *bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	close(b.in)
}

func (b *bus) forward(out chan<- string, done chan<- struct{}) {
	defer close(done)
	var queue []string
	maxQueued := 0
	in := b.in
	for in != nil || len(queue) > 0 {
		var sendCh chan<- string
		var next string
		if len(queue) > 0 {
			sendCh, next = out, queue[0]
		}
		select {
		case ev, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			queue = append(queue, ev)
			maxQueued = max(maxQueued, len(queue))
		case sendCh <- next:
			queue = queue[1:]
		}
	}
	close(out)
	b.mu.Lock() // in is closed: no publisher can be sending any more
	fmt.Printf("forwarder done: published=%d max backlog=%d\n", b.published, maxQueued)
	b.mu.Unlock()
}

func main() {
	b := &bus{in: make(chan string, inputBuf), seen: make(map[string]int)}
	out := make(chan string)
	fwdDone := make(chan struct{})
	go b.forward(out, fwdDone)

	subDone := make(chan struct{})
	go func() { // slow subscriber that contends on the bus mutex
		defer close(subDone)
		for ev := range out {
			b.mu.Lock()
			b.seen[ev]++
			b.mu.Unlock()
		}
	}()

	var wg sync.WaitGroup
	for p := 0; p < 3; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				b.Publish(fmt.Sprintf("topic-%d", (p+i)%4))
			}
		}(p)
	}
	wg.Wait()
	b.Close()
	<-subDone
	<-fwdDone
	b.mu.Lock()
	fmt.Printf("subscriber saw %v\n", b.seen)
	b.mu.Unlock()
}
