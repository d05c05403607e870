package implicitstring

import (
	"fmt"
	"sync"
)

// A logger that formats under its own lock: fmt calls an operand's String
// there, and a String that logs through the same logger locks it again
// (a deprecated accessor warning through a de-duplicating logger). The
// operand is known only at the logger's caller, two wrappers up.
type DistinctLogger struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (l *DistinctLogger) Warnf(format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.printOnce(format, v...)
}

func (l *DistinctLogger) printOnce(format string, v ...any) {
	s := fmt.Sprintf(format, v...)
	if !l.seen[s] {
		l.seen[s] = true
		println(s)
	}
}

// Warnf formats before it locks: String may log again.
func (l *DistinctLogger) SafeWarnf(format string, v ...any) {
	s := fmt.Sprintf(format, v...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.seen[s] {
		l.seen[s] = true
		println(s)
	}
}

var warnLog = &DistinctLogger{seen: map[string]bool{}}

type Doc struct {
	name string
	path string
}

// Path is deprecated: it warns through warnLog.
func (d *Doc) Path() string {
	warnLog.Warnf("Doc.Path is deprecated")
	return d.path
}

func (d *Doc) String() string {
	if d.path != "" {
		return "doc " + d.Path()
	}
	return "doc " + d.name
}

func render(d *Doc, known bool) {
	if !known {
		warnLog.Warnf("no layout for %s", d) // want `DistinctLogger.mu locked again by DistinctLogger.Warnf -> DistinctLogger.printOnce -> Doc.String -> Doc.Path -> DistinctLogger.Warnf \(at lockedlogger.go:18, on the paths that call DistinctLogger.Warnf\) while held since lockedlogger.go:18: self-deadlock \[double-lock\]`
	}
}

// Correct: a verb that does not call String, the logger that formats
// before it locks, and a value with no String method.
func renderSafe(d *Doc, n int) {
	warnLog.Warnf("no layout for %p (%d pages)", d, n)
	warnLog.SafeWarnf("no layout for %s", d)
	warnLog.Warnf("no layout for %s", d.name)
}

// A wrapper that formats holding no lock of its own is the call's own
// formatting: one finding for the String it runs, not a second one
// through its variadic parameter.
type fieldLogger struct{ prefix string }

func (l fieldLogger) Debugf(format string, args ...any) {
	println(l.prefix + fmt.Sprintf(format, args...))
}

type Bar struct {
	mu     sync.RWMutex
	width  int
	logger fieldLogger
}

func (b *Bar) String() string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return "bar"
}

func (b *Bar) Modify(width int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.width = width
	b.logger.Debugf("modified %s", b) // want `Bar.mu locked again by Bar.String \(at lockedlogger.go:\d+\) while held since lockedlogger.go:\d+: self-deadlock \[double-lock\]`
}
