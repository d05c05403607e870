// Pattern: Mattermost server app/platform PluginsEnvironment-style async fan-out
// (`s.Go(func() { ... })`): Notify holds the listener lock only to spawn one
// short-lived goroutine per listener, and each goroutine does the plain channel
// send; Close waits for in-flight sends *without* holding the lock. Listeners
// can thus call Notifier methods (which lock) while handling.
package main

import (
	"fmt"
	"sync"
)

type Notice struct {
	Seq   int
	Topic string
}

type Notifier struct {
	mu        sync.Mutex
	listeners map[string]chan<- Notice
	sent      int
	inflight  sync.WaitGroup
}

func NewNotifier() *Notifier { return &Notifier{listeners: map[string]chan<- Notice{}} }

func (n *Notifier) AddListener(name string, ch chan<- Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.listeners[name] = ch
}

func (n *Notifier) Notify(topic string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sent++
	nt := Notice{Seq: n.sent, Topic: topic}
	for _, ch := range n.listeners {
		n.inflight.Add(1)
		go func(ch chan<- Notice) {
			defer n.inflight.Done()
			ch <- nt
		}(ch)
	}
}

func (n *Notifier) Sent() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sent
}

func (n *Notifier) Listeners() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.listeners)
}

// Close must not hold n.mu while waiting: listeners lock n.mu to drain.
func (n *Notifier) Close() {
	n.inflight.Wait()
	n.mu.Lock()
	defer n.mu.Unlock()
	for name, ch := range n.listeners {
		close(ch)
		delete(n.listeners, name)
	}
}

func main() {
	n := NewNotifier()
	var wg sync.WaitGroup
	maxSeq := make([]int, 3)
	for i := 0; i < 3; i++ {
		ch := make(chan Notice)
		n.AddListener(fmt.Sprintf("plugin-%d", i), ch)
		wg.Add(1)
		go func(idx int, ch <-chan Notice) {
			defer wg.Done()
			for nt := range ch {
				if nt.Seq > n.Sent() { // lock the notifier while handling
					panic("notice newer than counter")
				}
				_ = n.Listeners()
				if nt.Seq > maxSeq[idx] {
					maxSeq[idx] = nt.Seq
				}
			}
		}(i, ch)
	}

	topics := []string{"user_created", "post_updated", "channel_deleted"}
	for i := 0; i < 24; i++ {
		n.Notify(topics[i%len(topics)])
	}
	n.Close()
	wg.Wait()
	fmt.Println("sent:", n.Sent(), "highest seq per listener:", maxSeq)
}
