// Pattern: plugin registry. NewPlugin builds a setState closure that updates
// the plugin under p.mu and then runs a nil-checked onChange hook; the
// registry calls setState while holding r.mu, and the lock order is always
// registry.mu -> plugin.mu -> recorder.mu. Infof is called under r.mu with a
// plugin whose String reads only immutable name and version fields.
package ok25plugins

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

var ErrDuplicate = errors.New("duplicate plugin")

type Logger interface {
	Infof(format string, args ...any)
}

type lineLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLogger) Infof(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("v%d.%d", v.Major, v.Minor) }

type State int

const (
	Unknown State = iota
	Registered
	Started
	Stopped
)

func (s State) String() string {
	return [...]string{"unknown", "registered", "started", "stopped"}[s]
}

type Plugin struct {
	name     string
	version  Version
	onChange func(name string, from, to State)
	setState func(to State)

	mu    sync.Mutex
	state State
}

func NewPlugin(name string, v Version, onChange func(string, State, State)) *Plugin {
	p := &Plugin{name: name, version: v, onChange: onChange}
	p.setState = func(to State) {
		p.mu.Lock()
		from := p.state
		p.state = to
		p.mu.Unlock()
		if p.onChange != nil {
			p.onChange(p.name, from, to)
		}
	}
	return p
}

// String uses only fields fixed at construction.
func (p *Plugin) String() string { return p.name + "@" + p.version.String() }

func (p *Plugin) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

type Registry struct {
	mu      sync.Mutex
	plugins map[string]*Plugin
	order   []string
	log     Logger
}

func NewRegistry(log Logger) *Registry {
	return &Registry{plugins: make(map[string]*Plugin), log: log}
}

func (r *Registry) Register(p *Plugin) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, dup := r.plugins[p.name]; dup {
		r.log.Infof("reject %v: %v already registered", p, old)
		return ErrDuplicate
	}
	r.plugins[p.name] = p
	r.order = append(r.order, p.name)
	p.setState(Registered)
	r.log.Infof("registered %v (%v)", p, Registered)
	return nil
}

func (r *Registry) StartAll() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, name := range r.order {
		p := r.plugins[name]
		if p.State() == Registered {
			p.setState(Started)
			r.log.Infof("started %v", p)
			n++
		}
	}
	return n
}

func (r *Registry) Stop(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.plugins[name]
	if !ok || p.State() != Started {
		return false
	}
	p.setState(Stopped)
	r.log.Infof("stopped %v version=%v", p, p.version)
	return true
}

type recorder struct {
	mu          sync.Mutex
	transitions map[string][]State
}

func (rc *recorder) onChange(name string, from, to State) {
	rc.mu.Lock()
	rc.transitions[name] = append(rc.transitions[name], to)
	rc.mu.Unlock()
}

func TestRegistryLifecycle(t *testing.T) {
	log := &lineLogger{}
	reg := NewRegistry(log)
	rec := &recorder{transitions: map[string][]State{}}

	const n = 12
	var wg sync.WaitGroup
	var dupMu sync.Mutex
	dups := 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				p := NewPlugin(fmt.Sprintf("plug-%02d", i), Version{1, g}, rec.onChange)
				if errors.Is(reg.Register(p), ErrDuplicate) {
					dupMu.Lock()
					dups++
					dupMu.Unlock()
				}
				if i%3 == 0 {
					reg.StartAll()
				}
				reg.Stop(fmt.Sprintf("plug-%02d", (i+g)%n))
			}
		}(g)
	}
	wg.Wait()
	reg.StartAll()

	if dups != 3*n {
		t.Fatalf("duplicates = %d, want %d", dups, 3*n)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.transitions) != n {
		t.Fatalf("transitions for %d plugins, want %d", len(rec.transitions), n)
	}
	for name, ts := range rec.transitions {
		if len(ts) < 2 || ts[0] != Registered || ts[1] != Started {
			t.Fatalf("%s transitions %v", name, ts)
		}
		if len(ts) == 3 && ts[2] != Stopped || len(ts) > 3 {
			t.Fatalf("%s transitions %v", name, ts)
		}
	}
}
