// Package handleleak: a function that returns a handle and an error and
// takes a lock only the handle's methods release leaks it on a failure
// return that gives the caller no handle.
package handleleak

import (
	"context"
	"errors"
	"sync"
)

type DB struct{ broken bool }

func (db *DB) Begin() (*Tx, error) {
	if db.broken {
		return nil, errors.New("broken")
	}
	return &Tx{}, nil
}

type Tx struct{ done bool }

func (tx *Tx) Rollback() { tx.done = true }

// Collection is what a collector hands out.
type Collection interface {
	Finish() error
	Cancel()
}

// Manager locks itself for a collection; the collection unlocks it.
type Manager struct {
	mu sync.RWMutex
	db *DB
}

func (m *Manager) StartCollection(ctx context.Context) (Collection, error) {
	m.mu.Lock()
	tx, err := m.db.Begin()
	if err != nil {
		return nil, err // want `Manager.mu taken at handleleak.go:\d+ is still held on this failure return, which gives the caller no collection: only its methods release Manager.mu \[lock-leak\]`
	}
	return &collection{ctx: ctx, tx: tx, m: m}, nil
}

type collection struct {
	ctx context.Context
	tx  *Tx
	m   *Manager
}

func (c *collection) Finish() error {
	c.tx.Rollback()
	c.m.mu.Unlock()
	return nil
}

func (c *collection) Cancel() {
	c.tx.Rollback()
	c.m.mu.Unlock()
}

// Store releases its lock on the failure path: an acquire on success.
// Silent.
type Store struct {
	mu sync.Mutex
	db *DB
}

func (s *Store) Start() (*session, error) {
	s.mu.Lock()
	tx, err := s.db.Begin()
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	return &session{s: s, tx: tx}, nil
}

type session struct {
	s  *Store
	tx *Tx
}

func (x *session) End() { x.tx.Rollback(); x.s.mu.Unlock() }

// Table's callers unlock the table themselves when begin fails. Silent.
type Table struct {
	mu sync.Mutex
	db *DB
}

func (t *Table) begin() (*cursor, error) {
	t.mu.Lock()
	tx, err := t.db.Begin()
	if err != nil {
		return nil, err
	}
	return &cursor{t: t, tx: tx}, nil
}

type cursor struct {
	t  *Table
	tx *Tx
}

func (c *cursor) Close() { c.tx.Rollback(); c.t.mu.Unlock() }

func (t *Table) Scan() error {
	c, err := t.begin()
	if err != nil {
		t.mu.Unlock()
		return err
	}
	c.Close()
	return nil
}

// Pool's lock is also released by Pool.Reset, outside the handle: the
// caller has another way to release it. Silent.
type Pool struct {
	mu sync.Mutex
	db *DB
}

func (p *Pool) Lease() (*lease, error) {
	p.mu.Lock()
	tx, err := p.db.Begin()
	if err != nil {
		return nil, err
	}
	return &lease{p: p, tx: tx}, nil
}

func (p *Pool) Reset() { p.mu.Unlock() }

type lease struct {
	p  *Pool
	tx *Tx
}

func (l *lease) Return() { l.tx.Rollback(); l.p.mu.Unlock() }
