// Fixed twin of gostd_sqlconnctx: golang/go#17518 adds the missing db.mu.Unlock() before returning the context error.

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var errDBClosed = errors.New("sql: database is closed")

type connReuseStrategy uint8

const (
	alwaysNewConn connReuseStrategy = iota
	cachedOrNewConn
)

type driverConn struct {
	db    *DB
	id    int
	inUse bool
}

type DB struct {
	mu       sync.Mutex
	freeConn []*driverConn
	numOpen  int
	nextID   int
	closed   bool
}

func Open() *DB { return &DB{} }

func (db *DB) conn(ctx context.Context, strategy connReuseStrategy) (*driverConn, error) {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil, errDBClosed
	}
	// Check if the context is expired.
	if err := ctx.Err(); err != nil {
		db.mu.Unlock()
		return nil, err
	}
	if strategy == cachedOrNewConn && len(db.freeConn) > 0 {
		dc := db.freeConn[0]
		db.freeConn = db.freeConn[1:]
		dc.inUse = true
		db.mu.Unlock()
		return dc, nil
	}
	db.nextID++
	db.numOpen++
	dc := &driverConn{db: db, id: db.nextID, inUse: true}
	db.mu.Unlock()
	return dc, nil
}

func (db *DB) putConn(dc *driverConn) {
	db.mu.Lock()
	dc.inUse = false
	db.freeConn = append(db.freeConn, dc)
	db.mu.Unlock()
}

type Tx struct {
	db *DB
	dc *driverConn
}

func (db *DB) BeginContext(ctx context.Context) (*Tx, error) {
	dc, err := db.conn(ctx, cachedOrNewConn)
	if err != nil {
		return nil, err
	}
	return &Tx{db: db, dc: dc}, nil
}

func (tx *Tx) Commit() error {
	tx.db.putConn(tx.dc)
	return nil
}

func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.closed = true
	db.freeConn = nil
	db.numOpen = 0
	return nil
}

func main() {
	db := Open()
	tx, err := db.BeginContext(context.Background())
	if err != nil {
		panic(err)
	}
	tx.Commit()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.BeginContext(ctx); err != nil {
		fmt.Println("begin:", err)
	}
	fmt.Println("close:", db.Close())
}
