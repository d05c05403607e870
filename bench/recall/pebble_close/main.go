// Project: pebble (db.go, compaction.go)
// Bug: DB.Close holds d.mu and waits on d.deleters (WaitGroup) for the obsolete-file
//   deletion goroutines spawned by compactions; those goroutines take d.mu to update
//   metrics after deleting, so Close and the deleters wait on each other forever.
// Upstream fix: release d.mu around d.deleters.Wait() in Close (cockroachdb/pebble #1046)

package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrClosed = errors.New("pebble: closed")

type FileNum uint64

type obsoleteFile struct {
	dir      string
	fileNum  FileNum
	fileSize uint64
}

type Metrics struct {
	Table struct {
		ObsoleteSize  uint64
		ObsoleteCount int64
	}
}

type versionSet struct {
	metrics        Metrics
	obsoleteTables []obsoleteFile
	nextFileNum    FileNum
}

type DB struct {
	dirname string

	// deleters tracks the goroutines spawned by deleteObsoleteFiles.
	deleters sync.WaitGroup

	mu struct {
		sync.Mutex
		closed   bool
		versions *versionSet
		compact  struct {
			cond            sync.Cond
			compactingCount int
			flushing        bool
		}
	}
}

func Open(dirname string) *DB {
	d := &DB{dirname: dirname}
	d.mu.versions = &versionSet{nextFileNum: 1}
	d.mu.compact.cond.L = &d.mu.Mutex
	return d
}

// maybeScheduleCompaction kicks off a background compaction. d.mu must be held.
func (d *DB) maybeScheduleCompaction() {
	if d.mu.closed {
		return
	}
	d.mu.compact.compactingCount++
	go d.compact(1)
}

func (d *DB) compact(jobID int) {
	time.Sleep(time.Millisecond) // merge sstables
	d.mu.Lock()
	defer d.mu.Unlock()
	vs := d.mu.versions
	for i := 0; i < 3; i++ {
		vs.obsoleteTables = append(vs.obsoleteTables, obsoleteFile{dir: d.dirname, fileNum: vs.nextFileNum, fileSize: 64 << 20})
		vs.nextFileNum++
	}
	d.mu.compact.compactingCount--
	d.deleteObsoleteFiles(jobID)
	d.mu.compact.cond.Broadcast()
}

// deleteObsoleteFiles collects obsolete files and deletes them in the
// background. d.mu must be held when calling this.
func (d *DB) deleteObsoleteFiles(jobID int) {
	files := d.mu.versions.obsoleteTables
	d.mu.versions.obsoleteTables = nil
	if len(files) == 0 {
		return
	}
	d.deleters.Add(1)
	go func() {
		d.paceAndDeleteObsoleteFiles(jobID, files)
		d.deleters.Done()
	}()
}

// paceAndDeleteObsoleteFiles runs in its own goroutine.
func (d *DB) paceAndDeleteObsoleteFiles(jobID int, files []obsoleteFile) {
	for _, of := range files {
		time.Sleep(200 * time.Microsecond) // pacing + fs.Remove
		d.mu.Lock()
		d.mu.versions.metrics.Table.ObsoleteSize -= of.fileSize
		d.mu.versions.metrics.Table.ObsoleteCount--
		d.mu.Unlock()
	}
}

// Close closes the DB.
func (d *DB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return ErrClosed
	}
	d.mu.closed = true

	// Wait for any in-progress compactions or flushes to finish.
	for d.mu.compact.compactingCount > 0 || d.mu.compact.flushing {
		d.mu.compact.cond.Wait()
	}

	// Wait for all the deletion goroutines spawned by cleaning jobs to finish.
	d.deleters.Wait()

	return nil
}

func main() {
	d := Open("/mnt/data1/cockroach")
	d.mu.Lock()
	d.mu.versions.metrics.Table.ObsoleteSize = 6 * 64 << 20
	d.mu.versions.metrics.Table.ObsoleteCount = 6
	d.maybeScheduleCompaction()
	d.maybeScheduleCompaction()
	d.mu.Unlock()

	if err := d.Close(); err != nil {
		fmt.Println("close:", err)
	}
	fmt.Println("closed")
}
