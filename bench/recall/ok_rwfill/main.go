// Pattern C. Modelled on moby/Hugo-style lazily populated registries guarded
// by an RWMutex: getLocked is called with the read lock held; on a miss it
// releases the read lock, defers re-taking it, upgrades to the write lock
// with its own deferred unlock, and re-checks. Defers run LIFO, so the write
// lock is released before the read lock is re-acquired on every return.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type template struct {
	name string
	body string
}

type registry struct {
	mu     sync.RWMutex
	byName map[string]*template
	loads  int
}

func newRegistry() *registry {
	return &registry{byName: make(map[string]*template)}
}

// getLocked requires r.mu.RLock held by the caller and returns with it held.
func (r *registry) getLocked(name string) *template {
	t, ok := r.byName[name]
	if !ok {
		r.mu.RUnlock()
		defer r.mu.RLock()
		r.mu.Lock()
		defer r.mu.Unlock()
		if t, ok = r.byName[name]; ok {
			return t // another goroutine loaded it meanwhile
		}
		if name == "" {
			return nil
		}
		t = &template{name: name, body: strings.ToUpper(name) + ".tmpl"}
		r.byName[name] = t
		r.loads++
	}
	return t
}

// Render holds the read lock for the whole render of several templates.
func (r *registry) Render(names ...string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var sb strings.Builder
	for _, n := range names {
		if t := r.getLocked(n); t != nil {
			sb.WriteString(t.body)
		}
	}
	return sb.String()
}

func (r *registry) Loads() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.loads
}

func main() {
	r := newRegistry()
	names := []string{"base", "list", "single", "", "partial", "footer"}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				a, b := names[(g+i)%len(names)], names[(g*3+i)%len(names)]
				out := r.Render(a, b)
				if a != "" && !strings.Contains(out, strings.ToUpper(a)) {
					panic("missing template")
				}
				if i%50 == 0 {
					_ = r.Loads()
				}
			}
		}(g)
	}
	wg.Wait()
	fmt.Println("loads", r.Loads())
	if r.Loads() != 5 {
		panic("template loaded more than once")
	}
}
