package handover

import "sync"

// A gate: the constructor write-locks usable and starts the goroutine
// that opens it, through a callback it installs on the store it fills
// (kubernetes' Cacher, whose onReplace unlocks usable after the first
// successful list). Readers RLock usable and wait until it is open. The
// goroutine lets go of the lock at some point, through the callback: the
// constructor's hold is handed to it, and a reader after the constructor
// is no double lock.

type Store struct {
	mu        sync.Mutex
	items     []string
	onReplace func()
}

func (s *Store) SetOnReplace(f func()) {
	s.mu.Lock()
	s.onReplace = f
	s.mu.Unlock()
}

func (s *Store) Replace(items []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = items
	if s.onReplace != nil {
		s.onReplace()
	}
}

type Cacher struct {
	usable sync.RWMutex
	store  *Store
}

func NewCacher(list func() []string) *Cacher {
	c := &Cacher{store: &Store{}}
	c.usable.Lock()
	go c.startCaching(list)
	return c
}

func (c *Cacher) startCaching(list func() []string) {
	c.store.SetOnReplace(func() { c.usable.Unlock() })
	c.store.Replace(list())
}

func (c *Cacher) List() []string {
	c.usable.RLock()
	defer c.usable.RUnlock()
	return nil
}

func UseCacher(list func() []string) []string {
	c := NewCacher(list)
	return c.List()
}

// A goroutine that never lets go: the reader after the constructor
// waits forever.
type Stuck struct {
	usable sync.RWMutex
	items  []string
}

func NewStuck(list func() []string) *Stuck {
	s := &Stuck{}
	s.usable.Lock()
	go s.fill(list)
	return s
}

func (s *Stuck) fill(list func() []string) { s.items = list() }

func (s *Stuck) List() []string {
	s.usable.RLock()
	defer s.usable.RUnlock()
	return s.items
}

func UseStuck(list func() []string) []string {
	s := NewStuck(list)
	return s.List() // want `Stuck.usable locked again by Stuck.List \(at callbackgate.go:\d+\) while held since callbackgate.go:\d+: self-deadlock`
}
