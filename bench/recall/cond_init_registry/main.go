// Pattern: constructor-time bootstrap of a plugin registry, modeled on
// k8s.io/apiserver admission.Plugins / CoreDNS plugin registration: while
// NewRegistry is registering the built-in plugins the registry has not been
// published to any other goroutine, so `initializing` is true and neither
// Register nor Lookup takes the mutex. Register only calls Lookup (to check
// dependencies) on the initializing path; after NewRegistry returns,
// initializing is false forever and Register never calls Lookup under lock.
package main

import (
	"fmt"
	"sort"
	"sync"
)

type Plugin struct {
	Name string
	Deps []string
}

type Registry struct {
	mu           sync.RWMutex
	plugins      map[string]Plugin
	initializing bool
}

func NewRegistry(builtins ...Plugin) (*Registry, error) {
	r := &Registry{plugins: map[string]Plugin{}, initializing: true}
	for _, p := range builtins {
		if err := r.Register(p); err != nil {
			return nil, err
		}
	}
	r.initializing = false
	return r, nil
}

func (r *Registry) Register(p Plugin) error {
	if !r.initializing {
		r.mu.Lock()
		defer r.mu.Unlock()
	}
	if _, dup := r.plugins[p.Name]; dup {
		return fmt.Errorf("plugin %q registered twice", p.Name)
	}
	if r.initializing {
		// Bootstrap: built-ins must be registered in dependency order.
		for _, d := range p.Deps {
			if _, ok := r.Lookup(d); !ok { // no lock taken: initializing
				return fmt.Errorf("plugin %q: unknown dependency %q", p.Name, d)
			}
		}
	}
	r.plugins[p.Name] = p
	return nil
}

func (r *Registry) Lookup(name string) (Plugin, bool) {
	if !r.initializing {
		r.mu.RLock()
		defer r.mu.RUnlock()
	}
	p, ok := r.plugins[name]
	return p, ok
}

func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for n := range r.plugins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func main() {
	r, err := NewRegistry(
		Plugin{Name: "log"},
		Plugin{Name: "cache", Deps: []string{"log"}},
		Plugin{Name: "forward", Deps: []string{"log", "cache"}},
	)
	if err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_ = r.Register(Plugin{Name: fmt.Sprintf("ext%d", i%3)})
			_, _ = r.Lookup("forward")
		}(i)
	}
	wg.Wait()
	fmt.Println(r.Names())
}
