package implicitstring

import (
	"fmt"
	"sync"
)

// A logger interface the package implements once, by a logger that
// formats its operands (fmt.Sprintf(format, args...)) before it locks
// its own buffer: the caller's operands are formatted under the caller's
// locks, and an operand that is an error formats through its Error.
type OpLogger interface {
	Debugf(format string, args ...any)
}

type bufLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *bufLogger) Debugf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

var opLog OpLogger = &bufLogger{}

type Operation struct {
	mu    sync.RWMutex
	phase int
	err   string
}

func (op *Operation) Error() string {
	op.mu.RLock()
	defer op.mu.RUnlock()
	return op.err
}

func (op *Operation) SetError(err error) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.err = err.Error()
	opLog.Debugf("operation failed: %s", op) // want `Operation.mu locked again by Operation.Error \(at ownlogger.go:\d+\) while held since ownlogger.go:\d+: self-deadlock \[double-lock\]`
}

// Correct: the phase, not the operation, is formatted under the lock;
// the operation after it.
func (op *Operation) SetPhase(p int) {
	op.mu.Lock()
	op.phase = p
	opLog.Debugf("phase %d", op.phase)
	op.mu.Unlock()
	opLog.Debugf("operation %s", op)
}
