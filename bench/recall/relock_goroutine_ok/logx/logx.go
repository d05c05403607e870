// Package logx: a logrus-like logger that fires hooks while holding its mutex.
package logx

import "sync"

// Levels.
const (
	Info  = 1
	Error = 3
)

// Entry points back to the Logger that produced it.
type Entry struct {
	Logger *Logger
	Level  int
	Msg    string
}

// Hook is implemented by importers.
type Hook interface{ Fire(e *Entry) }

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

// Log records msg and fires every hook under mu.
func (l *Logger) Log(level int, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, msg)
	for _, h := range l.hooks {
		h.Fire(&Entry{Logger: l, Level: level, Msg: msg}) // under mu
	}
}

// Len returns the number of recorded lines.
func (l *Logger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.out)
}
