// Pattern: an interface callback (ResourceEventHandler) is invoked while the
// informer holds inf.mu. The implementation calls back into the informer
// (which locks inf.mu) only when it receives a DeletedFinalStateUnknown
// tombstone. Tombstones are produced solely by Relist, which dispatches them
// after releasing inf.mu; events dispatched under inf.mu always carry *Pod.
// Modelled on kubernetes client-go's shared informer / DeltaFIFO handlers.
package main

import (
	"fmt"
	"sync"
)

type Pod struct{ Name string }

type DeletedFinalStateUnknown struct{ Key string }

type ResourceEventHandler interface {
	OnAdd(p *Pod)
	OnUpdate(old, cur *Pod)
	OnDelete(obj any)
}

type Informer struct {
	mu       sync.Mutex
	items    map[string]*Pod
	handlers []ResourceEventHandler
}

func (inf *Informer) AddHandler(h ResourceEventHandler) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	inf.handlers = append(inf.handlers, h)
}

func (inf *Informer) Upsert(p *Pod) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	old, ok := inf.items[p.Name]
	inf.items[p.Name] = p
	for _, h := range inf.handlers { // under inf.mu
		if ok {
			h.OnUpdate(old, p)
		} else {
			h.OnAdd(p)
		}
	}
}

func (inf *Informer) Delete(name string) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	p, ok := inf.items[name]
	delete(inf.items, name)
	for _, h := range inf.handlers {
		if ok {
			h.OnDelete(p) // always *Pod under the lock
		}
	}
}

// Relist drops every object not in keep; deletions are reported as
// tombstones AFTER inf.mu is released.
func (inf *Informer) Relist(keep map[string]bool) {
	inf.mu.Lock()
	var gone []string
	for k := range inf.items {
		if !keep[k] {
			delete(inf.items, k)
			gone = append(gone, k)
		}
	}
	hs := append([]ResourceEventHandler(nil), inf.handlers...)
	inf.mu.Unlock()
	for _, k := range gone {
		for _, h := range hs {
			h.OnDelete(DeletedFinalStateUnknown{Key: k})
		}
	}
}

func (inf *Informer) Has(k string) bool {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.items[k] != nil
}

// podSet: lock order inf.mu -> podSet.mu; podSet.mu is never held while
// calling into the informer.
type podSet struct {
	inf        *Informer
	mu         sync.Mutex
	names      map[string]bool
	tombstones int
}

func (s *podSet) OnAdd(p *Pod)           { s.mu.Lock(); s.names[p.Name] = true; s.mu.Unlock() }
func (s *podSet) OnUpdate(old, cur *Pod) { s.OnAdd(cur) }
func (s *podSet) OnDelete(obj any) {
	switch o := obj.(type) {
	case *Pod:
		s.mu.Lock()
		delete(s.names, o.Name)
		s.mu.Unlock()
	case DeletedFinalStateUnknown:
		// Only delivered outside inf.mu (Relist), so querying is safe.
		if s.inf.Has(o.Key) {
			return
		}
		s.mu.Lock()
		delete(s.names, o.Key)
		s.tombstones++
		s.mu.Unlock()
	}
}

func main() {
	inf := &Informer{items: map[string]*Pod{}}
	set := &podSet{inf: inf, names: map[string]bool{}}
	inf.AddHandler(set)

	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				name := fmt.Sprintf("pod-%d", i%20)
				inf.Upsert(&Pod{Name: name})
				if i%9 == 0 {
					inf.Delete(name)
				}
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			inf.Relist(map[string]bool{"pod-1": true, "pod-2": true})
		}
	}()
	wg.Wait()
	inf.Relist(map[string]bool{"pod-3": true})
	set.mu.Lock()
	fmt.Println("tracked:", len(set.names), "tombstones handled:", set.tombstones)
	set.mu.Unlock()
}
