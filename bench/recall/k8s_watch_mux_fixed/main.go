// kubernetes pkg/watch/mux.go: Mux.distribute holds m.lock while doing a
// blocking send on every watcher's result channel. A watcher that stops
// reading and calls Stop() goes through stopWatching, which needs m.lock, so
// distribute blocks forever on the send and Stop blocks on the lock.
// Fixed in kubernetes/kubernetes#1321 ("pkg/watch: fix potential deadlock").
// Fixed twin: Stop closes a per-watcher stopped channel before taking the lock; distribute selects on it.
package main

import (
	"fmt"
	"sync"
)

type Event struct{ Type, Object string }

type Interface interface {
	ResultChan() <-chan Event
	Stop()
}

type Mux struct {
	lock        sync.Mutex
	watchers    map[int64]*muxWatcher
	nextWatcher int64
	incoming    chan Event
}

func NewMux(queueLength int) *Mux {
	m := &Mux{watchers: map[int64]*muxWatcher{}, incoming: make(chan Event, queueLength)}
	go m.loop()
	return m
}

func (m *Mux) Watch() Interface {
	m.lock.Lock()
	defer m.lock.Unlock()
	id := m.nextWatcher
	m.nextWatcher++
	w := &muxWatcher{result: make(chan Event), stopped: make(chan struct{}), id: id, m: m}
	m.watchers[id] = w
	return w
}

func (m *Mux) Action(action string, obj string) { m.incoming <- Event{action, obj} }
func (m *Mux) Shutdown()                        { close(m.incoming) }

func (m *Mux) stopWatching(id int64) {
	m.lock.Lock()
	defer m.lock.Unlock()
	if w, ok := m.watchers[id]; ok {
		delete(m.watchers, id)
		close(w.result)
	}
}

func (m *Mux) closeAll() {
	m.lock.Lock()
	defer m.lock.Unlock()
	for id, w := range m.watchers {
		delete(m.watchers, id)
		close(w.result)
	}
}

func (m *Mux) loop() {
	for event := range m.incoming {
		m.distribute(event)
	}
	m.closeAll()
}

func (m *Mux) distribute(event Event) {
	m.lock.Lock()
	defer m.lock.Unlock()
	for _, w := range m.watchers {
		select {
		case w.result <- event:
		case <-w.stopped:
		}
	}
}

type muxWatcher struct {
	result  chan Event
	stopped chan struct{}
	stop    sync.Once
	id      int64
	m       *Mux
}

func (mw *muxWatcher) ResultChan() <-chan Event { return mw.result }

func (mw *muxWatcher) Stop() {
	mw.stop.Do(func() { close(mw.stopped); mw.m.stopWatching(mw.id) })
}

func main() {
	m, wg := NewMux(100), sync.WaitGroup{}
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func(i int, w Interface) {
			defer wg.Done()
			n := 0
			for range w.ResultChan() {
				n++
				if i == 0 && n == 3 {
					// This client only wanted the first few pod events.
					w.Stop()
					break
				}
			}
			fmt.Printf("watcher %d got %d events\n", i, n)
		}(i, m.Watch())
	}
	for i := 0; i < 50; i++ {
		m.Action("MODIFIED", fmt.Sprintf("pod-%d", i))
	}
	m.Shutdown()
	wg.Wait()
}
