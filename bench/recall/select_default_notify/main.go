// Style: like grpc-go ccBalancerWrapper / resolver wrapper. State updates are
// recorded under b.mu and the watcher is poked with a non-blocking send on a
// capacity-1 channel (select with default). The watcher itself takes b.mu to
// read the latest state, which is fine because the send never blocks.
package main

import (
	"fmt"
	"sync"
)

type balancerWrapper struct {
	mu       sync.Mutex
	addrs    []string
	version  int
	updateCh chan struct{}
	closed   bool
}

func newBalancerWrapper() *balancerWrapper {
	return &balancerWrapper{updateCh: make(chan struct{}, 1)}
}

func (b *balancerWrapper) UpdateState(addrs []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addrs = append([]string(nil), addrs...)
	b.version++
	select {
	case b.updateCh <- struct{}{}:
	default: // an update is already pending; the watcher will see the latest
	}
}

func (b *balancerWrapper) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	select {
	case b.updateCh <- struct{}{}:
	default:
	}
}

func (b *balancerWrapper) watcher(done chan<- int) {
	seen := 0
	for range b.updateCh {
		b.mu.Lock()
		addrs, v, closed := b.addrs, b.version, b.closed
		b.mu.Unlock()
		if v > seen {
			seen = v
			_ = len(addrs) // pick a subconn
		}
		if closed {
			done <- seen
			return
		}
	}
}

func main() {
	b := newBalancerWrapper()
	done := make(chan int)
	go b.watcher(done)
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				b.UpdateState([]string{fmt.Sprintf("10.0.%d.%d:443", r, i)})
			}
		}(r)
	}
	wg.Wait()
	b.Close()
	fmt.Println("watcher saw version", <-done)
}
