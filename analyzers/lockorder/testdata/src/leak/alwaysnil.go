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
