// Pattern A. Modelled on an NSQ-style in-memory topic queue: Put appends
// under the lock and only "resets" (which re-locks) when the queue is
// empty — impossible right after the append it just performed.
package main

import (
	"fmt"
	"sync"
)

type message struct {
	id   int
	body string
}

type memQueue struct {
	mu     sync.Mutex
	items  []message
	resets int
	depth  int
}

// reset drops the backing array if the queue is still empty. It takes the
// lock on every path.
func (q *memQueue) reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		q.items = nil
		q.resets++
	}
}

// Put appends m. The len()==0 branch would re-lock q.mu and deadlock,
// but len(q.items) is at least 1 immediately after the append.
func (q *memQueue) Put(m message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, m)
	if len(q.items) == 0 {
		q.reset()
		return
	}
	if len(q.items) > q.depth {
		q.depth = len(q.items)
	}
}

// Get pops the head; it calls reset only after releasing the lock.
func (q *memQueue) Get() (message, bool) {
	q.mu.Lock()
	if len(q.items) == 0 {
		q.mu.Unlock()
		return message{}, false
	}
	m := q.items[0]
	q.items = q.items[1:]
	empty := len(q.items) == 0
	q.mu.Unlock()
	if empty {
		q.reset()
	}
	return m, true
}

func main() {
	q := &memQueue{}
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				q.Put(message{id: p*1000 + i, body: "payload"})
			}
		}(p)
	}
	var got sync.Map
	var cwg sync.WaitGroup
	done := make(chan struct{})
	for c := 0; c < 3; c++ {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for {
				if m, ok := q.Get(); ok {
					got.Store(m.id, true)
					continue
				}
				select {
				case <-done:
					for m, ok := q.Get(); ok; m, ok = q.Get() {
						got.Store(m.id, true)
					}
					return
				default:
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	cwg.Wait()
	n := 0
	got.Range(func(_, _ any) bool { n++; return true })
	if n != 4*500 {
		panic("lost messages")
	}
	fmt.Println("consumed", n, "max depth >0:", q.depth > 0)
}
