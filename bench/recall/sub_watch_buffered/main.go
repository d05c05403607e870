// Pattern: Kubernetes apimachinery pkg/watch Broadcaster: every watcher gets a
// result channel buffered to the broadcaster's queue length, and the number of
// events ever distributed never exceeds that length, so the distribute loop
// (which sends while holding the broadcaster lock) never blocks.
package main

import (
	"fmt"
	"sync"
)

type EventType string

const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

type Event struct {
	Type   EventType
	Object string
}

type Broadcaster struct {
	mu          sync.Mutex
	watchers    map[int]chan Event
	nextWatcher int
	queueLength int
	distributed int
	stopped     bool
}

func NewBroadcaster(queueLength int) *Broadcaster {
	return &Broadcaster{watchers: map[int]chan Event{}, queueLength: queueLength}
}

func (b *Broadcaster) Watch() (int, <-chan Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.nextWatcher
	b.nextWatcher++
	ch := make(chan Event, b.queueLength)
	b.watchers[id] = ch
	return id, ch
}

// Action distributes an event to all watchers while holding the lock.
func (b *Broadcaster) Action(t EventType, obj string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return fmt.Errorf("broadcaster stopped")
	}
	if b.distributed >= b.queueLength {
		return fmt.Errorf("queue length %d exhausted", b.queueLength)
	}
	b.distributed++
	ev := Event{Type: t, Object: obj}
	for _, ch := range b.watchers {
		ch <- ev
	}
	return nil
}

func (b *Broadcaster) WatcherCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.watchers)
}

func (b *Broadcaster) Distributed() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.distributed
}

func (b *Broadcaster) Shutdown() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	for id, ch := range b.watchers {
		close(ch)
		delete(b.watchers, id)
	}
}

func main() {
	const maxEvents = 30
	b := NewBroadcaster(maxEvents)
	var wg sync.WaitGroup
	counts := make([]map[EventType]int, 4)

	for i := 0; i < 4; i++ {
		_, ch := b.Watch()
		counts[i] = map[EventType]int{}
		wg.Add(1)
		go func(idx int, ch <-chan Event) {
			defer wg.Done()
			for ev := range ch {
				counts[idx][ev.Type]++
				// Consult the broadcaster while handling the event.
				if b.Distributed() == 0 || b.WatcherCount() > 4 {
					panic("event from an inconsistent broadcaster")
				}
			}
		}(i, ch)
	}

	types := []EventType{Added, Modified, Deleted}
	for i := 0; i < maxEvents; i++ {
		if err := b.Action(types[i%3], fmt.Sprintf("pod-%d", i%7)); err != nil {
			fmt.Println("action:", err)
		}
	}
	b.Shutdown()
	wg.Wait()
	fmt.Println("distributed:", b.Distributed(), "watcher 0 saw:", counts[0])
}
