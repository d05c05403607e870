// Modelled on badger's DB.writeCh / doWrites: writers push requests onto a
// channel sized by Options.KvWriteChCapacity while holding the close RWMutex
// (read side), so Close cannot race with an in-flight send. The single
// writer goroutine drains everything currently queued into a local batch
// *before* taking db.mu to apply it, and it never touches closeMu.
package main

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

var ErrDBClosed = errors.New("db closed")

type Options struct {
	KvWriteChCapacity int
}

type request struct {
	key, val string
	done     chan struct{}
}

type DB struct {
	closeMu sync.RWMutex // read-held by senders, write-held by Close
	closed  bool
	writeCh chan *request

	mu      sync.Mutex // guards memtable and batches
	mem     map[string]string
	batches int

	writerDone chan struct{}
}

func Open(opt Options) *DB {
	db := &DB{
		writeCh:    make(chan *request, opt.KvWriteChCapacity),
		mem:        make(map[string]string),
		writerDone: make(chan struct{}),
	}
	go db.doWrites()
	return db
}

func (db *DB) Set(key, val string) error {
	req := &request{key: key, val: val, done: make(chan struct{})}
	db.closeMu.RLock()
	if db.closed {
		db.closeMu.RUnlock()
		return ErrDBClosed
	}
	db.writeCh <- req // may block; doWrites never needs closeMu
	db.closeMu.RUnlock()
	<-req.done // wait for the write without holding any lock
	return nil
}

func (db *DB) doWrites() {
	defer close(db.writerDone)
	for first := range db.writeCh {
		batch := []*request{first}
	drain: // drain the channel before taking the lock
		for len(batch) < cap(db.writeCh) {
			select {
			case r, ok := <-db.writeCh:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		db.mu.Lock()
		for _, r := range batch {
			db.mem[r.key] = r.val
		}
		db.batches++
		db.mu.Unlock()
		for _, r := range batch {
			close(r.done)
		}
	}
}

func (db *DB) Get(key string) (string, bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	v, ok := db.mem[key]
	return v, ok
}

func (db *DB) Close() {
	db.closeMu.Lock() // waits for senders; they are unblocked by doWrites
	db.closed = true
	close(db.writeCh)
	db.closeMu.Unlock()
	<-db.writerDone
}

func main() {
	db := Open(Options{KvWriteChCapacity: 8})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				k := fmt.Sprintf("k%d-%d", g, i%10)
				if err := db.Set(k, fmt.Sprint(i)); err != nil {
					return
				}
				db.Get(k)
			}
		}(g)
	}
	// Close concurrently with the writers: they observe ErrDBClosed and stop.
	for {
		if _, ok := db.Get("k0-5"); ok {
			break
		}
		runtime.Gosched()
	}
	db.Close()
	wg.Wait()
	fmt.Println("Set after close:", db.Set("x", "y"))
	db.mu.Lock()
	fmt.Printf("keys=%d batches=%d\n", len(db.mem), db.batches)
	db.mu.Unlock()
}
