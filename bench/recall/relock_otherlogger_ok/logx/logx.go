// Package logx: a logrus-like logger that fires hooks while holding its mutex.
package logx

import "sync"

// Entry points back to the Logger that produced it.
type Entry struct {
	Logger *Logger
	Msg    string
}

// Hook is implemented by importers.
type Hook interface{ Fire(e *Entry) }

// Logger is one independent logger instance with its own mutex.
type Logger struct {
	Name  string // immutable after New
	mu    sync.Mutex
	hooks []Hook
	out   []string
}

// New creates a named Logger.
func New(name string) *Logger { return &Logger{Name: name} }

// AddHook registers h.
func (l *Logger) AddHook(h Hook) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, h)
}

// Log records msg and fires hooks with l.mu held.
func (l *Logger) Log(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, msg)
	for _, h := range l.hooks {
		h.Fire(&Entry{Logger: l, Msg: msg}) // under l.mu
	}
}

// Lines returns a copy of the recorded lines.
func (l *Logger) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.out...)
}
