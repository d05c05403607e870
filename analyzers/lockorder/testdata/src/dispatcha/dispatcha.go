// Package dispatcha calls interfaces that importers implement: under its
// stream's lock (Owner) and after releasing it (Watcher). It is silent
// itself: the importer closes the cycle.
package dispatcha

import "sync"

// Owner is implemented by an importing package's session.
type Owner interface {
	CloseStream(id int)
}

// Watcher hears of changes once the stream's lock is released.
type Watcher interface {
	Changed(id int)
}

type Stream struct {
	id    int
	owner Owner
	watch Watcher
	mu    sync.Mutex
	state int
}

func New(id int, owner Owner, w Watcher) *Stream {
	return &Stream{id: id, owner: owner, watch: w}
}

// Close tells the owner while it still holds the stream's lock.
func (s *Stream) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = 2
	s.owner.CloseStream(s.id)
}

// Set tells the watcher after the lock is released.
func (s *Stream) Set(v int) {
	s.mu.Lock()
	s.state = v
	s.mu.Unlock()
	s.watch.Changed(s.id)
}

func (s *Stream) ForceClose() {
	s.mu.Lock()
	s.state = 2
	s.mu.Unlock()
}

// Hook hears of resets, through a helper the locked method calls.
type Hook interface {
	Reset(id int)
}

type Hooked struct {
	Stream
	hooks []Hook
}

func (h *Hooked) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.state = 0
	h.fire()
}

func (h *Hooked) fire() {
	for _, k := range h.hooks {
		k.Reset(h.id)
	}
}

func (h *Hooked) AddHook(k Hook) { h.hooks = append(h.hooks, k) }

// Logger fires its hooks under its lock, with the entry that names it.
type Logger struct {
	mu    sync.Mutex
	hooks []LogHook
	lines []string
}

type Entry struct {
	Logger *Logger
	Msg    string
}

type LogHook interface {
	Fire(e *Entry)
}

func (l *Logger) AddHook(h LogHook) {
	l.mu.Lock()
	l.hooks = append(l.hooks, h)
	l.mu.Unlock()
}

func (l *Logger) Log(msg string) {
	e := &Entry{Logger: l, Msg: msg}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range l.hooks {
		h.Fire(e)
	}
	l.lines = append(l.lines, msg)
}

// shape is measured under measureMu; the package's own Square is measured
// inline by the type switch, only other packages' shapes through Area.
type shape interface {
	Area() int
}

var (
	measureMu sync.Mutex
	measured  int
)

func Measure(sh shape) int {
	measureMu.Lock()
	defer measureMu.Unlock()
	measured++
	switch s := sh.(type) {
	case *Square:
		return s.side * s.side
	default:
		return sh.Area()
	}
}

type Square struct {
	mu   sync.Mutex
	side int
}

func (s *Square) Area() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.side * s.side
}

// Grow counts under the square's lock: Square.mu then measureMu.
func (s *Square) Grow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.side++
	measureMu.Lock()
	measured = 0
	measureMu.Unlock()
}
