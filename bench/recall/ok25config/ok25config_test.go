// Pattern: config reloader with a hook installed through SetHook. Reload and
// Edit.End deliver a Validate event while r.mu is held and an Applied event
// after the release; the watcher (holding a pointer back to the reloader) uses
// currentLocked for Validate and the locking Current for Applied. r.lock
// returns its release: used as defer r.lock()(), and stored in an Edit handle
// whose End runs it.
package ok25config

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
)

type Config struct {
	Version int
	Values  map[string]string
}

type EventKind int

const (
	Validate EventKind = iota
	Applied
)

type Event struct {
	Kind     EventKind
	Old, New *Config
}

var ErrInvalid = errors.New("invalid config")

type Reloader struct {
	mu       sync.Mutex
	cur      *Config
	hook     func(Event) error
	rejected int
}

func NewReloader(initial map[string]string) *Reloader {
	return &Reloader{cur: &Config{Values: initial}}
}

// lock acquires r.mu and returns the function that releases it.
func (r *Reloader) lock() func() {
	r.mu.Lock()
	return r.mu.Unlock
}

func (r *Reloader) SetHook(h func(Event) error) {
	defer r.lock()()
	r.hook = h
}

// currentLocked requires r.mu.
func (r *Reloader) currentLocked() *Config { return r.cur }

func (r *Reloader) Current() *Config {
	defer r.lock()()
	return r.cur
}

func (r *Reloader) Rejected() int {
	defer r.lock()()
	return r.rejected
}

// commit validates and installs values. It is entered with r.mu held and
// always runs release before returning.
func (r *Reloader) commit(values map[string]string, release func()) (*Config, error) {
	old := r.cur
	next := &Config{Version: old.Version + 1, Values: values}
	h := r.hook
	if h != nil {
		if err := h(Event{Kind: Validate, Old: old, New: next}); err != nil {
			r.rejected++
			release()
			return nil, err
		}
	}
	r.cur = next
	release()
	if h != nil {
		h(Event{Kind: Applied, Old: old, New: next})
	}
	return next, nil
}

func (r *Reloader) Reload(values map[string]string) (*Config, error) {
	return r.commit(values, r.lock())
}

// Edit holds r.mu from Begin until End.
type Edit struct {
	r       *Reloader
	release func()
	vals    map[string]string
}

func (r *Reloader) Begin() *Edit {
	release := r.lock()
	return &Edit{r: r, release: release, vals: maps.Clone(r.cur.Values)}
}

func (e *Edit) Set(k, v string) { e.vals[k] = v }

func (e *Edit) End() (*Config, error) {
	release := e.release
	e.release = nil
	return e.r.commit(e.vals, release)
}

type watcher struct {
	r        *Reloader
	checked  atomic.Int64
	mu       sync.Mutex
	versions []int
}

func (w *watcher) on(ev Event) error {
	switch ev.Kind {
	case Validate:
		w.checked.Add(1)
		if w.r.currentLocked() != ev.Old || ev.New.Values["port"] == "" {
			return ErrInvalid
		}
	case Applied:
		cur := w.r.Current()
		w.mu.Lock()
		w.versions = append(w.versions, ev.New.Version)
		w.mu.Unlock()
		if cur.Version < ev.New.Version {
			return fmt.Errorf("current %d older than applied %d", cur.Version, ev.New.Version)
		}
	}
	return nil
}

func TestReloaderHooks(t *testing.T) {
	r := NewReloader(map[string]string{"port": "80"})
	w := &watcher{r: r}
	r.SetHook(w.on)

	var ok atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				var err error
				switch (g + i) % 4 {
				case 0:
					_, err = r.Reload(map[string]string{"port": fmt.Sprint(8000 + i)})
				case 1:
					_, err = r.Reload(map[string]string{"host": "x"})
				case 2:
					e := r.Begin()
					e.Set("worker", fmt.Sprint(g))
					_, err = e.End()
				default:
					if c := r.Current(); c.Values["port"] == "" {
						t.Errorf("published config %d lacks port", c.Version)
					}
					continue
				}
				if err == nil {
					ok.Add(1)
				}
			}
		}(g)
	}
	wg.Wait()

	final := r.Current()
	if int64(final.Version) != ok.Load() {
		t.Fatalf("final version %d, successful commits %d", final.Version, ok.Load())
	}
	if r.Rejected()+final.Version != int(w.checked.Load()) {
		t.Fatalf("rejected %d + applied %d != validated %d", r.Rejected(), final.Version, w.checked.Load())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.versions) != final.Version {
		t.Fatalf("applied events %d, want %d", len(w.versions), final.Version)
	}
}
