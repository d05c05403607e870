// Style: like moby daemon/logger ring buffer (messageRing). Consumers wait on
// a sync.Cond built on the same mutex that guards the queue, in a for loop;
// Close broadcasts so blocked consumers drain and exit.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var errClosed = errors.New("ring closed")

type messageRing struct {
	mu     sync.Mutex
	wait   *sync.Cond
	queue  []string
	max    int
	closed bool
}

func newRing(max int) *messageRing {
	r := &messageRing{max: max}
	r.wait = sync.NewCond(&r.mu)
	return r
}

func (r *messageRing) Enqueue(m string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed
	}
	for len(r.queue) >= r.max && !r.closed {
		r.wait.Wait()
	}
	if r.closed {
		return errClosed
	}
	r.queue = append(r.queue, m)
	r.wait.Broadcast()
	return nil
}

func (r *messageRing) Dequeue() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) == 0 && !r.closed {
		r.wait.Wait()
	}
	if len(r.queue) == 0 {
		return "", errClosed
	}
	m := r.queue[0]
	r.queue = r.queue[1:]
	r.wait.Broadcast()
	return m, nil
}

func (r *messageRing) Close() {
	r.mu.Lock()
	r.closed = true
	r.wait.Broadcast()
	r.mu.Unlock()
}

func main() {
	r := newRing(4)
	var consumers sync.WaitGroup
	counts := make([]int, 3)
	for c := range counts {
		consumers.Add(1)
		go func(c int) {
			defer consumers.Done()
			for {
				if _, err := r.Dequeue(); err != nil {
					return
				}
				counts[c]++
			}
		}(c)
	}
	var producers sync.WaitGroup
	for p := 0; p < 2; p++ {
		producers.Add(1)
		go func(p int) {
			defer producers.Done()
			for i := 0; i < 100; i++ {
				_ = r.Enqueue(fmt.Sprintf("p%d-%d", p, i))
			}
		}(p)
	}
	producers.Wait()
	r.Close()
	consumers.Wait()
	fmt.Println("consumed:", counts[0]+counts[1]+counts[2])
}
