// Package logx: a logrus-like logger whose hooks run under its mutex; a few
// methods are lock-free and documented as safe to call from hooks.
package logx

import (
	"sync"
	"sync/atomic"
)

// Entry points back to its Logger.
type Entry struct {
	Logger *Logger
	Level  int32
	Msg    string
}

// Hook is implemented by importers.
type Hook interface{ Fire(e *Entry) }

// Logger writes entries and fires hooks while holding mu.
type Logger struct {
	level   atomic.Int32
	pending chan string // buffered; written non-blockingly

	mu    sync.Mutex
	hooks []Hook
	out   []string
}

// New returns a Logger with the given minimum level.
func New(level int32) *Logger {
	l := &Logger{pending: make(chan string, 16)}
	l.level.Store(level)
	return l
}

// AddHook registers h.
func (l *Logger) AddHook(h Hook) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, h)
}

// Level is lock-free. Safe to call from hooks.
func (l *Logger) Level() int32 { return l.level.Load() }

// Defer queues msg without locking or blocking (dropped if the buffer is
// full). Safe to call from hooks.
func (l *Logger) Defer(msg string) {
	select {
	case l.pending <- msg:
	default:
	}
}

// Log writes msg and fires hooks under mu.
func (l *Logger) Log(level int32, msg string) {
	if level < l.Level() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, msg)
	for _, h := range l.hooks {
		h.Fire(&Entry{Logger: l, Level: level, Msg: msg}) // under mu
	}
}

// Drain returns messages queued by Defer; call it outside of hooks.
func (l *Logger) Drain() (res []string) {
	for len(l.pending) > 0 {
		res = append(res, <-l.pending)
	}
	return res
}
