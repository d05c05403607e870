package leak

import (
	"errors"
	"sync"
)

// A constructor that read-locks and returns its handle with a nil error
// on every path: the caller's `if err != nil { return err }` is no
// failure path leaving the lock held (the handle's Done releases it).
type TxMgr struct {
	commit sync.RWMutex
	db     map[string]string
}

type Sim struct{ m *TxMgr }

func (s *Sim) Done() { s.m.commit.RUnlock() }

func (m *TxMgr) NewSim() (*Sim, error) {
	s := &Sim{m: m}
	m.commit.RLock()
	return s, nil
}

func (m *TxMgr) Simulate(key string) (string, error) {
	s, err := m.NewSim()
	if err != nil {
		return "", err
	}
	defer s.Done()
	return m.db[key], nil
}

// One that can fail after it locked: its caller's error return does
// leave the lock held.
func (m *TxMgr) NewChecked(key string) (*Sim, error) {
	s := &Sim{m: m}
	m.commit.RLock()
	if key == "" {
		return s, errors.New("empty key")
	}
	return s, nil
}

func (m *TxMgr) Check(key string) (string, error) {
	s, err := m.NewChecked(key)
	if err != nil {
		return "", err // want `TxMgr.commit taken at alwaysnil.go:\d+ is still held on this return path \(other paths release it\)`
	}
	defer s.Done()
	return m.db[key], nil
}

// The nil error passed on by a wrapper (`t, err := d.begin(); return t,
// err`) is nil too, and so is a named error result set from it before a
// deferred rollback: neither early return is a failure path. The return
// after a check that can fail, without the rollback, is.
type Bolt struct{ rw sync.Mutex }

type BoltTx struct{ db *Bolt }

func (db *Bolt) Begin() (*BoltTx, error) {
	db.rw.Lock()
	return &BoltTx{db: db}, nil
}

func (tx *BoltTx) Rollback() { tx.db.rw.Unlock() }

func (tx *BoltTx) Commit() error {
	tx.db.rw.Unlock()
	return nil
}

type MetaStore struct{ db *Bolt }

func (ms *MetaStore) Transaction() (*BoltTx, error) {
	tx, err := ms.db.Begin()
	return tx, err
}

// CommitRolledBack rolls back on every error in a deferred closure.
func (ms *MetaStore) CommitRolledBack(check func() error) (err error) {
	tx, err := ms.Transaction()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err = check(); err != nil {
		return err
	}
	return tx.Commit()
}

// CommitLeaky returns the check's error without the rollback.
func (ms *MetaStore) CommitLeaky(check func() error) error {
	tx, err := ms.Transaction()
	if err != nil {
		return err
	}
	if err := check(); err != nil {
		return err // want `Bolt.rw taken at alwaysnil.go:\d+ is still held on this return path \(other paths release it\)`
	}
	return tx.Commit()
}

// A lone error result works the same way: helm's LockRelease locks the
// release's own mutex and returns nil, so its caller's `if err := ...;
// err != nil { return err }` is no path with the lock left held. A
// locker that can fail makes that return a leak.
type Releases struct {
	locksMu sync.Mutex
	locks   map[string]*sync.Mutex
}

func (s *Releases) LockRelease(name string) error {
	s.locksMu.Lock()
	lock, ok := s.locks[name]
	if !ok {
		lock = &sync.Mutex{}
		s.locks[name] = lock
	}
	s.locksMu.Unlock()
	lock.Lock()
	return nil
}

func (s *Releases) UnlockRelease(name string) {
	s.locksMu.Lock()
	lock := s.locks[name]
	s.locksMu.Unlock()
	lock.Unlock()
}

func (s *Releases) Uninstall(name string) error {
	if err := s.LockRelease(name); err != nil {
		return err
	}
	defer s.UnlockRelease(name)
	return nil
}

func (s *Releases) LockChecked(name string) error {
	s.locksMu.Lock()
	lock := s.locks[name]
	s.locksMu.Unlock()
	lock.Lock()
	if name == "" {
		return errors.New("no name")
	}
	return nil
}

func (s *Releases) Upgrade(name string) error {
	if err := s.LockChecked(name); err != nil {
		return err // want `Releases.locks\[\] taken at alwaysnil.go:\d+ is still held on this return path \(other paths release it\)`
	}
	defer s.UnlockRelease(name)
	return nil
}
