// Pattern B. Modelled on an etcd watchableStore / Kubernetes shared-informer
// style hub: a notifier hook is installed once via SetNotifier and called
// while h.mu is held. The installed notifier takes h.statsMu, a different
// mutex, and never h.mu; lock order is always mu -> statsMu.
package main

import (
	"fmt"
	"sync"
)

type event struct {
	key string
	rev int64
}

type hub struct {
	mu     sync.Mutex
	rev    int64
	data   map[string]int64
	notify func(h *hub, ev event)

	statsMu  sync.Mutex
	perKey   map[string]int
	lastSeen int64
}

func newHub() *hub {
	return &hub{data: make(map[string]int64), perKey: make(map[string]int)}
}

// SetNotifier must be called before the hub is shared.
func (h *hub) SetNotifier(fn func(h *hub, ev event)) { h.notify = fn }

func countEvent(h *hub, ev event) {
	h.statsMu.Lock()
	defer h.statsMu.Unlock()
	h.perKey[ev.key]++
	if ev.rev > h.lastSeen {
		h.lastSeen = ev.rev
	}
}

func (h *hub) Put(key string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rev++
	h.data[key] = h.rev
	if h.notify != nil {
		h.notify(h, event{key: key, rev: h.rev})
	}
	return h.rev
}

func (h *hub) Rev() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rev
}

// Stats only needs statsMu.
func (h *hub) Stats() (int, int64) {
	h.statsMu.Lock()
	defer h.statsMu.Unlock()
	n := 0
	for _, c := range h.perKey {
		n += c
	}
	return n, h.lastSeen
}

func main() {
	h := newHub()
	h.SetNotifier(countEvent)
	var wg sync.WaitGroup
	for g := 0; g < 5; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				h.Put(fmt.Sprintf("/registry/pods/p%d", (g+i)%13))
				if i%20 == 0 {
					h.Stats()
				}
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			_ = h.Rev()
		}
	}()
	wg.Wait()
	n, last := h.Stats()
	fmt.Println("events", n, "last", last, "rev", h.Rev())
}
