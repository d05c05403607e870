// Project: ipfs-cluster/ipfs-cluster (pintracker/optracker)
// Bug: Operation.SetError logged the operation while holding op.mu; the log
// call formats the operation with %s, and Operation.String() reads Phase(),
// Error() and Timestamp(), each of which takes op.mu.RLock.
// Fix: update the fields under the lock and log after releasing it.
package b23ipfsclusteroptracker_fixed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

type OperationType int

const (
	OperationUnknown OperationType = iota
	OperationPin
	OperationUnpin
)

func (t OperationType) String() string {
	return [...]string{"unknown", "pin", "unpin"}[t]
}

type Phase int

const (
	PhaseError Phase = iota
	PhaseQueued
	PhaseInProgress
	PhaseDone
)

func (p Phase) String() string {
	return [...]string{"error", "queued", "in_progress", "done"}[p]
}

type Pin struct {
	Cid  string
	Name string
}

type Logger interface {
	Debugf(format string, args ...any)
	Errorf(format string, args ...any)
}

type bufLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *bufLogger) Debugf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, "DEBUG "+s)
	l.mu.Unlock()
}

func (l *bufLogger) Errorf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, "ERROR "+s)
	l.mu.Unlock()
}

var logger Logger = &bufLogger{}

type Operation struct {
	ctx    context.Context
	cancel func()

	opType OperationType
	pin    Pin

	mu           sync.RWMutex
	phase        Phase
	attemptCount int
	priority     bool
	error        string
	ts           time.Time
}

func NewOperation(ctx context.Context, pin Pin, typ OperationType, ph Phase) *Operation {
	ctx, cancel := context.WithCancel(ctx)
	return &Operation{ctx: ctx, cancel: cancel, pin: pin, opType: typ, phase: ph, ts: time.Now()}
}

func (op *Operation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "type: %s\n", op.Type().String())
	fmt.Fprintf(&b, "pin: %s (%s)\n", op.pin.Cid, op.pin.Name)
	fmt.Fprintf(&b, "phase: %s\n", op.Phase().String())
	fmt.Fprintf(&b, "error: %s\n", op.Error())
	fmt.Fprintf(&b, "timestamp: %s\n", op.Timestamp().String())
	return b.String()
}

func (op *Operation) Type() OperationType { return op.opType }

func (op *Operation) Phase() Phase {
	op.mu.RLock()
	defer op.mu.RUnlock()
	return op.phase
}

func (op *Operation) SetPhase(ph Phase) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.phase = ph
	op.ts = time.Now()
}

func (op *Operation) Error() string {
	op.mu.RLock()
	defer op.mu.RUnlock()
	return op.error
}

func (op *Operation) SetError(err error) {
	op.mu.Lock()
	op.phase = PhaseError
	op.error = err.Error()
	op.ts = time.Now()
	op.mu.Unlock()
	logger.Debugf("optracker: operation failed: %s", op)
}

func (op *Operation) Timestamp() time.Time {
	op.mu.RLock()
	defer op.mu.RUnlock()
	return op.ts
}

func (op *Operation) IncAttempt() {
	op.mu.Lock()
	op.attemptCount++
	op.mu.Unlock()
}

func (op *Operation) Cancel() { op.cancel() }

func TestProbe(t *testing.T) {
	op := NewOperation(context.Background(), Pin{Cid: "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG", Name: "docs"}, OperationPin, PhaseQueued)
	done := make(chan struct{})
	go func() {
		defer close(done)
		op.SetPhase(PhaseInProgress)
		op.IncAttempt()
		op.SetError(fmt.Errorf("ipfs pin request timed out"))
	}()
	<-done
	if op.Phase() != PhaseError {
		t.Fatalf("phase = %s", op.Phase())
	}
	op.Cancel()
}
