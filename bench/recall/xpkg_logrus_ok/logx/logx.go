// Package logx is a small structured logger modeled on sirupsen/logrus.
package logx

import "sync"

// Hook is fired for every entry at or above the logger level.
type Hook interface {
	Fire(level int, msg string)
}

// Logger writes entries and fires hooks.
type Logger struct {
	mu    sync.Mutex
	level int
	hooks []Hook
	out   []string
}

// New returns a logger at level 0.
func New() *Logger { return &Logger{} }

// AddHook registers h.
func (l *Logger) AddHook(h Hook) {
	l.mu.Lock()
	l.hooks = append(l.hooks, h)
	l.mu.Unlock()
}

// SetLevel changes the minimum level.
func (l *Logger) SetLevel(v int) {
	l.mu.Lock()
	l.level = v
	l.mu.Unlock()
}

// Log fires the hooks while holding Logger.mu, like older logrus releases
// whose Entry.fireHooks ran under entry.Logger.mu.
func (l *Logger) Log(level int, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if level < l.level {
		return
	}
	for _, h := range l.hooks {
		h.Fire(level, msg)
	}
	l.out = append(l.out, msg)
}
