package testmodel

import (
	"errors"
	"sync"
	"testing"
)

// A builder written in the test's files recovers a panic as an error and
// goes on with the lock the panicking code held: reported, as in
// production code.

type changeMap struct {
	mu    sync.Mutex
	paths map[string]bool
}

func (m *changeMap) add(path string, kind int) {
	m.mu.Lock()
	if kind > 1 {
		panic("unexpected bundle kind") // want `changeMap.mu taken at panic_test.go:\d+ is still held when this panics, and siteBuilder.process recovers the panic \(at panic_test.go:\d+\): the program goes on with changeMap.mu locked, and its next Lock blocks for good \[lock-leak\]`
	}
	m.paths[path] = true
	m.mu.Unlock()
}

type siteBuilder struct{ changes *changeMap }

func (b *siteBuilder) process(path string, kind int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("build failed")
		}
	}()
	b.changes.add(path, kind)
	return nil
}

func TestRebuildAfterBadBundle(t *testing.T) {
	b := &siteBuilder{changes: &changeMap{paths: map[string]bool{}}}
	_ = b.process("a", 2)
	_ = b.process("b", 0)
}

// A test helper that checks that a call panics drops what panicked: no
// program goes on. Silent.

type quota struct {
	mu   sync.Mutex
	left int
}

func (q *quota) take(n int) {
	q.mu.Lock()
	if n > q.left {
		panic("over quota")
	}
	q.left -= n
	q.mu.Unlock()
}

func mustPanic(t *testing.T, f func()) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	f()
}

func TestTakeOverQuota(t *testing.T) {
	q := &quota{left: 1}
	mustPanic(t, func() { q.take(2) })
}
