package samecondition

import "sync"

// A function that locks only for a non-nil error, calling itself where
// it has just tested the error not nil (instead of its inner list's Add,
// thanos' SyncMultiError): the take it calls is decided by the test the
// caller already passed.
type ErrList struct {
	mu   sync.Mutex
	errs []error
}

func (l *ErrList) Add(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.Add(err) // want `ErrList.mu locked again by ErrList.Add \(at decided.go:\d+\), taken there where err != nil, as it is here, while held since decided.go:\d+: self-deadlock \[double-lock\]`
}

// AddFixed appends to the list itself. Silent.
func (l *ErrList) AddFixed(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

// Clear calls Add only where the error is nil, where Add takes nothing.
// Silent.
func (l *ErrList) Clear(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = nil
	if err == nil {
		l.Add(err)
	}
}
