// Reconstruction of a cockroachdb/pebble bug fixed by the commit "db: add
// missing logUnlock in some excise error paths" (picked into crl-release-25.1
// and pulled into CockroachDB by cockroachdb/cockroach#144154; the number of
// the pebble PR itself is reconstructed, not recalled).
//
// The MANIFEST lock of pebble is versionSet.logLock/logUnlock: a writing flag
// guarded by DB.mu, with a sync.Cond on DB.mu for waiters. ingestApply takes
// DB.mu, calls logLock, and documents that "logAndApply unconditionally
// releases the manifest lock, but any earlier returns must unlock the
// manifest". The excise loop of IngestAndExcise returned the error of d.excise
// directly, so DB.mu was released by its defer but the manifest stayed marked
// as being written. Every later flush, compaction or Metrics call waits in
// logLock on the condition variable forever.
//
// The fixed twin calls logUnlock before returning the excise error (upstream).
package main

import (
	"errors"
	"fmt"
	"sync"
)

type fileMetadata struct {
	FileNum       int
	Smallest      string
	Largest       string
	backingExists bool
}

type versionEdit struct {
	NewFiles     []*fileMetadata
	DeletedFiles map[int]*fileMetadata
}

type version struct{ Levels [7][]*fileMetadata }

type versionSet struct {
	current    *version
	writing    bool
	writerCond sync.Cond
	edits      int
}

func (vs *versionSet) init(mu *sync.Mutex) { vs.writerCond.L = mu }

// logLock locks the manifest for writing. DB.mu must be held.
func (vs *versionSet) logLock() {
	for vs.writing {
		vs.writerCond.Wait()
	}
	vs.writing = true
}

func (vs *versionSet) logUnlock() {
	if !vs.writing {
		panic("MANIFEST not locked for writing")
	}
	vs.writing = false
	vs.writerCond.Signal()
}

// logAndApply applies ve and unconditionally releases the manifest lock.
func (vs *versionSet) logAndApply(ve *versionEdit) error {
	defer vs.logUnlock()
	for _, f := range ve.NewFiles {
		vs.current.Levels[6] = append(vs.current.Levels[6], f)
	}
	vs.edits++
	return nil
}

type DB struct {
	mu struct {
		sync.Mutex
		versions *versionSet
		compact  struct {
			cond     sync.Cond
			flushing bool
		}
		memtableSize int
	}
	nextFileNum int
}

func Open() *DB {
	d := &DB{nextFileNum: 10}
	d.mu.versions = &versionSet{current: &version{}}
	d.mu.versions.init(&d.mu.Mutex)
	d.mu.compact.cond.L = &d.mu.Mutex
	d.mu.versions.current.Levels[6] = []*fileMetadata{{FileNum: 7, Smallest: "a", Largest: "z"}}
	return d
}

type KeyRange struct{ Start, End string }

func (k KeyRange) Valid() bool { return k.Start != "" && k.End != "" }

// excise splits m around exciseSpan; it must read the bounds of the table.
func (d *DB) excise(exciseSpan KeyRange, m *fileMetadata, ve *versionEdit, level int) error {
	if !m.backingExists {
		return fmt.Errorf("pebble: excise of %06d.sst: %w", m.FileNum, errors.New("file does not exist"))
	}
	ve.DeletedFiles[m.FileNum] = m
	return nil
}

func (d *DB) ingestApply(files []*fileMetadata, exciseSpan KeyRange) (*versionEdit, error) {
	d.mu.Lock()
	defer d.mu.Unlock()

	ve := &versionEdit{NewFiles: files, DeletedFiles: map[int]*fileMetadata{}}
	d.mu.versions.logLock()
	current := d.mu.versions.current
	if exciseSpan.Valid() {
		for level := range current.Levels {
			for _, m := range current.Levels[level] {
				if m.Largest < exciseSpan.Start || m.Smallest >= exciseSpan.End {
					continue
				}
				if err := d.excise(exciseSpan, m, ve, level); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := d.mu.versions.logAndApply(ve); err != nil {
		return nil, err
	}
	return ve, nil
}

func (d *DB) IngestAndExcise(paths []string, exciseSpan KeyRange) error {
	var files []*fileMetadata
	for range paths {
		d.nextFileNum++
		files = append(files, &fileMetadata{FileNum: d.nextFileNum, Smallest: exciseSpan.Start, Largest: exciseSpan.Start, backingExists: true})
	}
	_, err := d.ingestApply(files, exciseSpan)
	return err
}

func (d *DB) Set(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mu.memtableSize += len(key) * 1000
	if d.mu.memtableSize >= 4000 && !d.mu.compact.flushing {
		d.mu.compact.flushing = true
		go d.flush()
	}
}

func (d *DB) flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flush1()
	d.mu.compact.flushing = false
	d.mu.compact.cond.Broadcast()
}

func (d *DB) flush1() {
	d.mu.versions.logLock()
	d.nextFileNum++
	ve := &versionEdit{NewFiles: []*fileMetadata{{FileNum: d.nextFileNum, Smallest: "k", Largest: "m", backingExists: true}}}
	_ = d.mu.versions.logAndApply(ve)
	d.mu.memtableSize = 0
}

func (d *DB) Metrics() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mu.versions.logLock()
	edits := d.mu.versions.edits
	d.mu.versions.logUnlock()
	return edits
}

func (d *DB) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.mu.compact.flushing {
		d.mu.compact.cond.Wait()
	}
}

func main() {
	d := Open()
	// Rebalancing a range: the snapshot's sstables are ingested and the span
	// of the range is excised; the table overlapping it lost its backing.
	err := d.IngestAndExcise([]string{"snap-000001.sst"}, KeyRange{Start: "c", End: "f"})
	fmt.Println("ingest and excise:", err)

	for _, k := range []string{"k1", "k2"} {
		d.Set(k)
	}
	fmt.Println("manifest edits:", d.Metrics())
	d.Close()
	fmt.Println("manifest edits after flush:", d.Metrics())
}
