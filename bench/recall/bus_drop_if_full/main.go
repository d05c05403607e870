// Pattern: kubernetes apimachinery pkg/watch Broadcaster with
// FullChannelBehavior == DropIfChannelFull (used by client-go's
// tools/record EventBroadcaster): every send to a watcher's result channel
// happens with the broadcaster lock held, so there is never a concurrent
// sender and a watcher whose buffer is full is skipped (and the drop
// counted) instead of sent to. A len < cap observed under the lock therefore
// guarantees the send has room, and watchers are free to take the same lock
// to read the broadcaster's drop counters.
package main

import (
	"fmt"
	"sync"
	"time"
)

const incomingQueueLength = 25

type Event struct {
	Type   string
	Reason string
	Object string
}

type watcher struct {
	id     int
	result chan Event
}

type Broadcaster struct {
	lock     sync.Mutex
	watchers map[int]*watcher
	nextID   int
	dropped  map[int]int
}

func NewBroadcaster() *Broadcaster {
	return &Broadcaster{watchers: make(map[int]*watcher), dropped: make(map[int]int)}
}

func (m *Broadcaster) Watch() *watcher {
	m.lock.Lock()
	defer m.lock.Unlock()
	w := &watcher{id: m.nextID, result: make(chan Event, incomingQueueLength)}
	m.nextID++
	m.watchers[w.id] = w
	return w
}

func (m *Broadcaster) Action(ev Event) {
	m.lock.Lock()
	defer m.lock.Unlock()
	for id, w := range m.watchers {
		if len(w.result) < cap(w.result) {
			w.result <- ev
		} else {
			m.dropped[id]++
		}
	}
}

func (m *Broadcaster) droppedFor(id int) int {
	m.lock.Lock()
	defer m.lock.Unlock()
	return m.dropped[id]
}

func (m *Broadcaster) Shutdown() {
	m.lock.Lock()
	defer m.lock.Unlock()
	for id, w := range m.watchers {
		close(w.result)
		delete(m.watchers, id)
	}
}

func main() {
	b := NewBroadcaster()
	var sinks sync.WaitGroup
	for i, delay := range []time.Duration{0, 50 * time.Microsecond, 300 * time.Microsecond} {
		w := b.Watch()
		sinks.Add(1)
		go func() {
			defer sinks.Done()
			recorded := 0
			for ev := range w.result {
				_ = ev.Reason
				recorded++
				if recorded%20 == 0 {
					_ = b.droppedFor(w.id) // exported as a metric
				}
				time.Sleep(delay)
			}
			fmt.Printf("sink %d: recorded=%d dropped=%d\n", i, recorded, b.droppedFor(w.id))
		}()
	}

	var recorders sync.WaitGroup
	for c := 0; c < 4; c++ {
		recorders.Add(1)
		go func(c int) {
			defer recorders.Done()
			for i := 0; i < 500; i++ {
				b.Action(Event{Type: "Normal", Reason: "Scheduled", Object: fmt.Sprintf("pod-%d-%d", c, i)})
			}
		}(c)
	}
	recorders.Wait()
	b.Shutdown()
	sinks.Wait()
}
