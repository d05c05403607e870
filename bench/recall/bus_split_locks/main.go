// Pattern: moby/moby daemon/events: Events.Log publishes each Message to every
// subscriber while holding the registry lock (subsMu), so a concurrent
// Evict cannot race the fan-out. Subscriber goroutines account what they
// receive under a separate per-type counter lock (statsMu) and never touch
// subsMu, so a publisher blocked on a full subscriber channel can always be
// drained.
package main

import (
	"fmt"
	"sync"
	"time"
)

const subscriberBuffer = 256

type Message struct {
	Type   string
	Action string
	ID     string
	Time   time.Time
}

type Events struct {
	subsMu sync.Mutex
	subs   map[int]chan Message
	nextID int

	statsMu sync.Mutex
	byType  map[string]int
}

func New() *Events {
	return &Events{subs: make(map[int]chan Message), byType: make(map[string]int)}
}

// Subscribe registers a new listener and returns its id and channel.
func (e *Events) Subscribe() (int, <-chan Message) {
	e.subsMu.Lock()
	defer e.subsMu.Unlock()
	id := e.nextID
	e.nextID++
	ch := make(chan Message, subscriberBuffer)
	e.subs[id] = ch
	return id, ch
}

// Log fans a message out to all current subscribers under subsMu.
func (e *Events) Log(action, typ, id string) {
	msg := Message{Type: typ, Action: action, ID: id, Time: time.Now()}
	e.subsMu.Lock()
	defer e.subsMu.Unlock()
	for _, ch := range e.subs {
		ch <- msg
	}
}

// Close closes every subscriber channel; callers must have stopped logging.
func (e *Events) Close() {
	e.subsMu.Lock()
	defer e.subsMu.Unlock()
	for id, ch := range e.subs {
		close(ch)
		delete(e.subs, id)
	}
}

func (e *Events) record(m Message) {
	e.statsMu.Lock()
	e.byType[m.Type]++
	e.statsMu.Unlock()
}

func (e *Events) Stats() map[string]int {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	out := make(map[string]int, len(e.byType))
	for k, v := range e.byType {
		out[k] = v
	}
	return out
}

func main() {
	ev := New()

	var consumers sync.WaitGroup
	for i := 0; i < 3; i++ {
		_, ch := ev.Subscribe()
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			for m := range ch {
				ev.record(m)
				if m.Action == "die" {
					time.Sleep(50 * time.Microsecond)
				}
			}
		}()
	}

	var producers sync.WaitGroup
	for w := 0; w < 4; w++ {
		producers.Add(1)
		go func(w int) {
			defer producers.Done()
			for i := 0; i < 400; i++ {
				id := fmt.Sprintf("c%d-%d", w, i)
				ev.Log("start", "container", id)
				ev.Log("die", "container", id)
				if i%50 == 0 {
					ev.Log("pull", "image", "busybox")
				}
			}
		}(w)
	}

	producers.Wait()
	ev.Close()
	consumers.Wait()
	fmt.Println("stats:", ev.Stats())
}
