// Modelled on database/sql: returning a connection only needs db.mu when the
// driver reported an error (the open count must shrink). The pool warm-up
// path holds db.mu and hands fresh connections back with a nil error.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

var (
	errBadConn  = errors.New("driver: bad connection")
	errDBClosed = errors.New("sql: database is closed")
)

type driverConn struct {
	id     int
	closed atomic.Bool
}

func (dc *driverConn) close() { dc.closed.Store(true) }

type DB struct {
	mu      sync.Mutex // protects numOpen, nextID, closed
	numOpen int
	nextID  int
	closed  bool
	maxOpen int
	idle    chan *driverConn // capacity maxOpen: never more idle conns than open ones
	freed   chan struct{}    // wakes waiters when a bad conn frees an open slot
}

func Open(maxOpen int) *DB {
	return &DB{maxOpen: maxOpen, idle: make(chan *driverConn, maxOpen), freed: make(chan struct{}, maxOpen)}
}

// releaseConn gives dc back to the pool. Only the error path takes db.mu.
func (db *DB) releaseConn(dc *driverConn, err error) {
	if err != nil {
		db.mu.Lock()
		db.numOpen--
		db.mu.Unlock()
		dc.close()
		select {
		case db.freed <- struct{}{}:
		default:
		}
		return
	}
	select {
	case db.idle <- dc:
	default:
		panic("idle overflow: more idle conns than maxOpen") // invariant: cap == maxOpen
	}
}

// Warm holds db.mu while opening connections and hands each one back with a
// nil error, so releaseConn never reaches its locking branch here, and the
// channel send cannot block because numOpen <= maxOpen == cap(idle).
func (db *DB) Warm(n int) {
	db.mu.Lock()
	defer db.mu.Unlock()
	for i := 0; i < n && !db.closed && db.numOpen < db.maxOpen; i++ {
		db.numOpen++
		db.nextID++
		db.releaseConn(&driverConn{id: db.nextID}, nil)
	}
}

func (db *DB) conn() (*driverConn, error) {
	select {
	case dc := <-db.idle:
		return dc, nil
	default:
	}
	for {
		db.mu.Lock()
		if db.closed {
			db.mu.Unlock()
			return nil, errDBClosed
		}
		if db.numOpen < db.maxOpen {
			db.numOpen++
			db.nextID++
			dc := &driverConn{id: db.nextID}
			db.mu.Unlock()
			return dc, nil
		}
		db.mu.Unlock()
		select { // wait outside the lock for a conn or a free slot
		case dc := <-db.idle:
			return dc, nil
		case <-db.freed:
		}
	}
}

func (db *DB) Exec(q int) error {
	dc, err := db.conn()
	if err != nil {
		return err
	}
	var execErr error
	if q%9 == 4 {
		execErr = fmt.Errorf("exec %d: %w", q, errBadConn)
	}
	db.releaseConn(dc, execErr)
	return execErr
}

func (db *DB) Close() int {
	db.mu.Lock()
	db.closed = true
	db.mu.Unlock()
	n := 0
	for {
		select {
		case dc := <-db.idle:
			dc.close()
			n++
		default:
			return n
		}
	}
}

func main() {
	db := Open(4)
	db.Warm(2)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if err := db.Exec(g*100 + i); errors.Is(err, errBadConn) {
					bad.Add(1)
				}
				if i%25 == 0 {
					db.Warm(1)
				}
			}
		}(g)
	}
	wg.Wait()
	fmt.Printf("bad=%d closedIdle=%d\n", bad.Load(), db.Close())
}
