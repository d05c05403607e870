// Package logx: a logrus-like logger that fires hooks while holding its
// mutex (as logrus' Entry.log does with Logger.mu held around fireHooks).
package logx

import "sync"

// Entry points back to the Logger that produced it, like logrus.Entry.
type Entry struct {
	Logger *Logger
	Msg    string
}

// Hook is implemented by importers, like logrus.Hook.
type Hook interface{ Fire(e *Entry) error }

// Logger records lines and fires hooks with mu held.
type Logger struct {
	mu    sync.Mutex
	hooks []Hook
	out   []string
}

// AddHook registers h.
func (l *Logger) AddHook(h Hook) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, h)
}

// Log records msg and fires every hook with mu held.
func (l *Logger) Log(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, msg)
	for _, h := range l.hooks {
		_ = h.Fire(&Entry{Logger: l, Msg: msg}) // CALL UNDER LOCK
	}
}

// Len returns the number of recorded lines.
func (l *Logger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.out)
}
