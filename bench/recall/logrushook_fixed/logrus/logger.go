// Package logrus is a cut-down sirupsen/logrus Logger with hooks.
package logrus

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// Level is a log severity.
type Level int

// Levels, most severe first.
const (
	ErrorLevel Level = iota
	WarnLevel
	InfoLevel
)

// Entry is one log record.
type Entry struct {
	Logger  *Logger
	Level   Level
	Message string
}

// Hook is fired for every entry at one of its Levels.
type Hook interface {
	Levels() []Level
	Fire(*Entry) error
}

// Logger writes entries to Out and fires hooks.
type Logger struct {
	mu    sync.Mutex
	Out   io.Writer
	hooks map[Level][]Hook
}

// New returns a logger writing to out.
func New(out io.Writer) *Logger {
	return &Logger{Out: out, hooks: make(map[Level][]Hook)}
}

// AddHook registers h for its levels.
func (l *Logger) AddHook(h Hook) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lv := range h.Levels() {
		l.hooks[lv] = append(l.hooks[lv], h)
	}
}

// Log fires the hooks for level and writes the entry.
func (l *Logger) Log(level Level, msg string) {
	e := &Entry{Logger: l, Level: level, Message: msg}
	l.mu.Lock()
	hooks := append([]Hook(nil), l.hooks[level]...)
	l.mu.Unlock()

	// Hooks run without the logger lock so they may log themselves.
	for _, h := range hooks {
		if err := h.Fire(e); err != nil {
			fmt.Fprintf(os.Stderr, "Failed to fire hook: %v\n", err)
		}
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.Out, "level=%d msg=%q\n", level, msg)
}
