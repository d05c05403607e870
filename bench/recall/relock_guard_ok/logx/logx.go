// Package logx: a logrus-like logger with a reentrancy guard. While hooks
// are firing, the atomic `firing` flag is set; a Log call made from a hook
// sees it and returns early WITHOUT touching mu.
package logx

import (
	"sync"
	"sync/atomic"
)

// Entry points back to the Logger that produced it.
type Entry struct {
	Logger *Logger
	Msg    string
}

// Hook is implemented by importers.
type Hook interface{ Fire(e *Entry) }

// Logger records lines and fires hooks with mu held.
type Logger struct {
	firing atomic.Bool // true only while hooks run (mu is held then)
	mu     sync.Mutex
	hooks  []Hook
	out    []string
}

// AddHook registers h.
func (l *Logger) AddHook(h Hook) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, h)
}

// Log records msg and fires hooks. If called while hooks are firing it drops
// msg and reports false instead of locking. The flag is checked before Lock,
// so a hook's nested Log never reaches l.mu.Lock.
func (l *Logger) Log(msg string) bool {
	if l.firing.Load() {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, msg)
	l.firing.Store(true)
	defer l.firing.Store(false) // runs before the Unlock above (LIFO)
	for _, h := range l.hooks {
		h.Fire(&Entry{Logger: l, Msg: msg})
	}
	return true
}

// Lines returns a copy of the recorded lines.
func (l *Logger) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.out...)
}
