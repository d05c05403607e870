package panicleak

import (
	"errors"
	"sync"
)

// A callback run with the lock held panics the same way: a store that
// runs fn between taking its writer lock and committing leaves the lock
// held when fn panics and a caller recovers (bolt's Update before it
// deferred the rollback). A write to a nil map is a panic the source
// does not spell.

type kvStore struct {
	writer sync.Mutex
	data   map[string]int
}

type storeTx struct{ s *kvStore }

func (s *kvStore) begin() *storeTx {
	s.writer.Lock()
	return &storeTx{s: s}
}

func (tx *storeTx) commit() { tx.s.writer.Unlock() }

func (s *kvStore) update(fn func(*storeTx) error) error {
	tx := s.begin()
	if err := fn(tx); err != nil { // want `kvStore.writer taken at callback.go:\d+ is still held when serve.func\d+ panics \(at callback.go:\d+\), and serve recovers the panic \(at callback.go:\d+\): the program goes on with kvStore.writer locked, and its next Lock blocks for good \[lock-leak\]`
		tx.commit()
		return err
	}
	tx.commit()
	return nil
}

// The fix: the commit is deferred, and runs on the panic. Silent.
func (s *kvStore) updateDeferred(fn func(*storeTx) error) error {
	tx := s.begin()
	defer tx.commit()
	return fn(tx)
}

// Every function passed here returns errors instead. Silent.
func (s *kvStore) view(fn func(*storeTx) error) error {
	tx := s.begin()
	err := fn(tx)
	tx.commit()
	return err
}

func serve(s *kvStore, keys []string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("request failed")
		}
	}()
	_ = s.view(func(tx *storeTx) error {
		if len(keys) == 0 {
			return errors.New("no keys")
		}
		return nil
	})
	_ = s.updateDeferred(func(tx *storeTx) error {
		var counts map[string]int
		counts[keys[0]]++
		return nil
	})
	return s.update(func(tx *storeTx) error {
		var counts map[string]int
		for _, k := range keys {
			counts[k]++
		}
		return nil
	})
}
