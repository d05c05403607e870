// Pattern: a plugin registry created once per test, configured via an
// Options struct with an OnRegister hook that runs while the registry mutex
// is held and calls back only through namesLocked, which does not lock.
// Batch registration keeps the release function returned by the lock helper
// in a struct field and invokes it from End(), after which locking methods
// are called again.
package ok24plugins

import (
	"fmt"
	"sort"
	"sync"
	"testing"
)

type Plugin interface {
	Name() string
	Init() error
}

type Options struct {
	OnRegister func(r *Registry, name string)
}

type Registry struct {
	mu      sync.Mutex
	opts    Options
	plugins map[string]Plugin
	order   []string
}

func NewRegistry(opts Options) *Registry {
	return &Registry{opts: opts, plugins: map[string]Plugin{}}
}

func (r *Registry) lock() func() {
	r.mu.Lock()
	return r.mu.Unlock
}

// namesLocked must be called with r.mu held.
func (r *Registry) namesLocked() []string {
	out := append([]string(nil), r.order...)
	sort.Strings(out)
	return out
}

// registerLocked must be called with r.mu held.
func (r *Registry) registerLocked(p Plugin) bool {
	if _, dup := r.plugins[p.Name()]; dup {
		return false
	}
	r.plugins[p.Name()] = p
	r.order = append(r.order, p.Name())
	if r.opts.OnRegister != nil {
		r.opts.OnRegister(r, p.Name())
	}
	return true
}

func (r *Registry) Register(p Plugin) bool {
	defer r.lock()()
	return r.registerLocked(p)
}

func (r *Registry) Names() []string {
	defer r.lock()()
	return r.namesLocked()
}

// Batch holds the registry lock from Begin until End.
type Batch struct {
	reg     *Registry
	release func()
	added   int
}

func (r *Registry) Begin() *Batch {
	return &Batch{reg: r, release: r.lock()}
}

func (b *Batch) Add(p Plugin) {
	if b.reg.registerLocked(p) {
		b.added++
	}
}

func (b *Batch) End() int {
	if b.release != nil {
		b.release()
		b.release = nil
	}
	return b.added
}

type echoPlugin struct{ name string }

func (p echoPlugin) Name() string { return p.name }
func (p echoPlugin) Init() error  { return nil }

func TestProbe(t *testing.T) {
	var snapMu sync.Mutex
	var snapshots [][]string
	reg := NewRegistry(Options{
		OnRegister: func(r *Registry, name string) {
			names := r.namesLocked()
			snapMu.Lock()
			snapshots = append(snapshots, names)
			snapMu.Unlock()
		},
	})

	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				reg.Register(echoPlugin{name: fmt.Sprintf("single-%d-%d", g, i)})
			}
			b := reg.Begin()
			for i := 0; i < 5; i++ {
				b.Add(echoPlugin{name: fmt.Sprintf("batch-%d-%d", g, i)})
			}
			if n := b.End(); n != 5 {
				t.Errorf("batch %d added %d", g, n)
			}
			_ = reg.Names()
		}(g)
	}
	wg.Wait()

	if got := len(reg.Names()); got != 60 {
		t.Fatalf("expected 60 plugins, got %d", got)
	}
	if !reg.Register(echoPlugin{name: "late"}) || reg.Register(echoPlugin{name: "late"}) {
		t.Fatal("duplicate detection failed")
	}
	snapMu.Lock()
	defer snapMu.Unlock()
	if len(snapshots) != 61 {
		t.Fatalf("expected 61 hook calls, got %d", len(snapshots))
	}
}
