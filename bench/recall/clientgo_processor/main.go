// Modelled on kubernetes client-go tools/cache/shared_informer.go
// (sharedProcessor.distribute / addListener): the listener set is guarded by
// an RWMutex; distribute snapshots the handler funcs under RLock, releases the
// lock, and only then invokes each callback. A handler may therefore call
// addListener (which takes the write lock) without deadlocking.
package main

import (
	"fmt"
	"sync"
)

type Event struct {
	Type string
	Obj  string
}

// ResourceEventHandlerFunc is a func-valued callback stored in the processor.
type ResourceEventHandlerFunc func(Event)

type sharedProcessor struct {
	listenersLock sync.RWMutex
	listeners     []ResourceEventHandlerFunc
	started       bool
}

func (p *sharedProcessor) addListener(h ResourceEventHandlerFunc) {
	p.listenersLock.Lock()
	defer p.listenersLock.Unlock()
	p.listeners = append(p.listeners, h)
}

func (p *sharedProcessor) numListeners() int {
	p.listenersLock.RLock()
	defer p.listenersLock.RUnlock()
	return len(p.listeners)
}

// distribute copies the listener slice under the read lock and calls the
// handlers after releasing it.
func (p *sharedProcessor) distribute(ev Event) {
	p.listenersLock.RLock()
	handlers := make([]ResourceEventHandlerFunc, len(p.listeners))
	copy(handlers, p.listeners)
	p.listenersLock.RUnlock()

	for _, h := range handlers {
		h(ev)
	}
}

type counter struct {
	mu    sync.Mutex
	byTyp map[string]int
}

func (c *counter) handle(ev Event) {
	c.mu.Lock()
	c.byTyp[ev.Type]++
	c.mu.Unlock()
}

func main() {
	p := &sharedProcessor{}
	c := &counter{byTyp: make(map[string]int)}
	p.addListener(c.handle)

	var once sync.Once
	// This handler re-enters the processor; safe because distribute does not
	// hold listenersLock while invoking callbacks.
	p.addListener(func(ev Event) {
		if ev.Type == "ADD" {
			once.Do(func() { p.addListener(c.handle) })
		}
	})

	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				typ := "ADD"
				if j%3 == 0 {
					typ = "UPDATE"
				}
				p.distribute(Event{Type: typ, Obj: fmt.Sprintf("pod-%d-%d", i, j)})
			}
		}(i)
	}
	wg.Wait()

	c.mu.Lock()
	fmt.Println("listeners", p.numListeners(), "counts", c.byTyp)
	c.mu.Unlock()
}
