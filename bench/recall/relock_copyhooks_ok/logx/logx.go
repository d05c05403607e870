// Package logx is a tiny logrus-style logger. Hooks are snapshotted while
// the mutex is held and fired only after it has been released, so a hook may
// call back into any Logger method.
package logx

import "sync"

// Entry is handed to hooks; it points back at the Logger that produced it.
type Entry struct {
	Logger *Logger
	Msg    string
}

// Hook is implemented by importers.
type Hook interface {
	Fire(e *Entry)
}

// Logger records lines and notifies hooks.
type Logger struct {
	mu    sync.Mutex
	hooks []Hook
	lines []string
}

// AddHook registers h.
func (l *Logger) AddHook(h Hook) {
	l.mu.Lock()
	l.hooks = append(l.hooks, h)
	l.mu.Unlock()
}

// Log appends msg, then fires a snapshot of the hooks outside the lock.
func (l *Logger) Log(msg string) {
	l.mu.Lock()
	l.lines = append(l.lines, msg)
	hooks := append([]Hook(nil), l.hooks...)
	l.mu.Unlock()

	e := &Entry{Logger: l, Msg: msg}
	for _, h := range hooks {
		h.Fire(e) // no lock held here
	}
}

// Count returns the number of logged lines; it takes the mutex.
func (l *Logger) Count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}
