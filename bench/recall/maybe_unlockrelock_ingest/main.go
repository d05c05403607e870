// Pattern: the callee runs with the caller's lock held, but on one branch it
// releases that lock, performs slow I/O, and re-acquires it before returning.
// Modelled on pebble's DB.handleIngestAsFlushable:
//
//	if !opts.DisableWAL { d.mu.Unlock(); writeWAL(); d.mu.Lock() }
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type IngestOptions struct{ DisableWAL bool }

type flushable struct {
	seq   uint64
	files []string
}

type DB struct {
	mu struct {
		sync.Mutex
		seq        uint64
		flushables []flushable
		ingests    int
	}
	// logMu protects the WAL. It is never held while acquiring mu, and mu
	// is never held while acquiring logMu.
	logMu sync.Mutex
	wal   []string
}

func (d *DB) writeWAL(files []string, seq uint64) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	time.Sleep(50 * time.Microsecond) // simulated fsync
	for _, f := range files {
		d.wal = append(d.wal, fmt.Sprintf("%d:%s", seq, f))
	}
}

// handleIngestAsFlushable requires d.mu to be held and returns with it held.
// On the WAL branch it temporarily drops d.mu so that fsync does not block
// other users of d.mu.
func (d *DB) handleIngestAsFlushable(files []string, seq uint64, opts IngestOptions) {
	if !opts.DisableWAL {
		d.mu.Unlock()
		d.writeWAL(files, seq)
		d.mu.Lock()
	}
	// State may have changed while unlocked; we only append, so that is fine.
	d.mu.flushables = append(d.mu.flushables, flushable{seq: seq, files: files})
}

func (d *DB) Ingest(files []string, opts IngestOptions) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mu.seq++
	seq := d.mu.seq
	d.handleIngestAsFlushable(files, seq, opts)
	d.mu.ingests++
	return seq
}

// Flush drains flushables; it only ever holds d.mu.
func (d *DB) Flush() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	fs := d.mu.flushables
	d.mu.flushables = nil
	sort.Slice(fs, func(i, j int) bool { return fs[i].seq < fs[j].seq })
	n := 0
	for _, f := range fs {
		n += len(f.files)
	}
	return n
}

func main() {
	d := &DB{}
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			opts := IngestOptions{DisableWAL: w%2 == 0}
			for i := 0; i < 50; i++ {
				d.Ingest([]string{fmt.Sprintf("w%d-%d.sst", w, i)}, opts)
			}
		}(w)
	}
	flushed := 0
	stop := make(chan struct{})
	flushDone := make(chan struct{})
	go func() {
		defer close(flushDone)
		for {
			select {
			case <-stop:
				return
			default:
				flushed += d.Flush()
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-flushDone
	flushed += d.Flush()
	d.logMu.Lock()
	walLen := len(d.wal)
	d.logMu.Unlock()
	d.mu.Lock()
	fmt.Printf("ingests=%d flushed=%d wal=%d\n", d.mu.ingests, flushed, walLen)
	d.mu.Unlock()
}
