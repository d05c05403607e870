// Project: influxdata/influxdb (tsdb/engine/tsm1/file_store.go, engine.go; v0.11/v0.12)
// Issue: #6271 "Deadlock with tsm1 engine", fixed by #6277.
//
// Bug: a query opens a cursor with FileStore.KeyCursor, which takes
// f.mu.RLock (line 96) and holds it, via defer, while newKeyCursor builds
// the cursor. newKeyCursor calls fs.locations to find the blocks for the key,
// and locations snapshots the file list under f.mu.RLock again (line 155).
// When a compaction finishes in between, FileStore.Replace asks for
// f.mu.Lock (line 102): it waits for the query's first read lock, and the
// query's second RLock (line 155) queues behind the pending writer. The
// query waits for the compaction, the compaction waits for the query, and all
// further reads and writes of the shard hang behind them.
//
// Fix (#6277): locations (and newKeyCursor) document that "the read-lock has
// been taken" by the caller and no longer lock f.mu themselves.
//
// main() runs one query and one compaction; a test hook at the start of
// newKeyCursor holds the query there until the compaction's Replace is queued.
package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

type IndexEntry struct {
	MinTime, MaxTime int64
	Offset           int64
}

type TSMFile interface {
	// Path returns the underlying file path for the TSMFile.
	Path() string
	// ReadEntries returns the index entries for all blocks for the given key.
	ReadEntries(key string, entries *[]IndexEntry)
	// TimeRange returns the min and max time across all keys in the file.
	TimeRange() (int64, int64)
	// Close the underlying file resources
	Close() error
	// Remove deletes the file from the filesystem
	Remove() error
}

// tsmReader is an in-memory stand-in for *TSMReader.
type tsmReader struct {
	path    string
	min     int64
	max     int64
	entries map[string][]IndexEntry
}

func (r *tsmReader) Path() string { return r.path }
func (r *tsmReader) ReadEntries(key string, entries *[]IndexEntry) {
	*entries = append((*entries)[:0], r.entries[key]...)
}
func (r *tsmReader) TimeRange() (int64, int64) { return r.min, r.max }
func (r *tsmReader) Close() error              { return nil }
func (r *tsmReader) Remove() error             { return nil }

func NewTSMReader(path string) (*tsmReader, error) {
	return &tsmReader{path: path, min: 0, max: 100,
		entries: map[string][]IndexEntry{"cpu,host=a#!~#value": {{MinTime: 0, MaxTime: 100}}}}, nil
}

type tsmReaders []TSMFile

func (a tsmReaders) Len() int           { return len(a) }
func (a tsmReaders) Less(i, j int) bool { return a[i].Path() < a[j].Path() }
func (a tsmReaders) Swap(i, j int)      { a[i], a[j] = a[j], a[i] }

type FileStore struct {
	mu           sync.RWMutex
	lastModified time.Time

	currentGeneration int
	dir               string

	files []TSMFile
}

func NewFileStore(dir string) *FileStore {
	return &FileStore{dir: dir, lastModified: time.Now()}
}

func (f *FileStore) Add(files ...TSMFile) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files = append(f.files, files...)
	sort.Sort(tsmReaders(f.files))
}

func (f *FileStore) KeyCursor(key string, t int64, ascending bool) *KeyCursor {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return newKeyCursor(f, key, t, ascending)
}

func (f *FileStore) Replace(oldFiles, newFiles []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()

	f.lastModified = time.Now()

	// Copy the current set of active files while we rename
	// and load the new files.
	var updated []TSMFile
	for _, t := range f.files {
		updated = append(updated, t)
	}

	// Rename all the new files to make them live on restart
	for _, file := range newFiles {
		newName := strings.TrimSuffix(file, ".tmp")
		tsm, err := NewTSMReader(newName)
		if err != nil {
			return err
		}
		updated = append(updated, tsm)
	}

	// We need to prune our set of active files now
	var active []TSMFile
	for _, file := range updated {
		keep := true
		for _, remove := range oldFiles {
			if remove == file.Path() {
				keep = false
				if err := file.Close(); err != nil {
					return err
				}
				if err := file.Remove(); err != nil {
					return err
				}
				break
			}
		}
		if keep {
			active = append(active, file)
		}
	}

	f.files = active
	sort.Sort(tsmReaders(f.files))
	return nil
}

// locations returns the files and index blocks for a key and time.  ascending indicates
// whether the key will be scan in ascending time order or descenging time order.
// This function assumes the read-lock has been taken.
func (f *FileStore) locations(key string, t int64, ascending bool) []location {
	var locations []location

	filesSnapshot := make([]TSMFile, len(f.files))
	for i := range f.files {
		filesSnapshot[i] = f.files[i]
	}

	var entries []IndexEntry
	for _, fd := range filesSnapshot {
		minTime, maxTime := fd.TimeRange()

		// If we ascending and the max time of the file is before where we want to start
		// skip it.
		if ascending && maxTime < t {
			continue
			// If we are descending and the min time fo the file is after where we want to start,
			// then skip it.
		} else if !ascending && minTime > t {
			continue
		}

		// This file could potential contain points we are looking for so find the blocks for
		// the given key.
		fd.ReadEntries(key, &entries)
		for _, ie := range entries {
			if ascending && ie.MaxTime < t {
				continue
			} else if !ascending && ie.MinTime > t {
				continue
			}
			// Otherwise, add this file and block location
			locations = append(locations, location{r: fd, entry: ie})
		}
	}
	return locations
}

type KeyCursor struct {
	key string
	fs  *FileStore

	// seeks is all the file locations that we need to return during iteration.
	seeks []location

	ascending bool
}

type location struct {
	r     TSMFile
	entry IndexEntry

	// Has this location been read before
	read bool
}

// testHookNewKeyCursor is called at the start of newKeyCursor (tests only).
var testHookNewKeyCursor func()

// newKeyCursor returns a new instance of KeyCursor.
// This function assumes the read-lock has been taken.
func newKeyCursor(fs *FileStore, key string, t int64, ascending bool) *KeyCursor {
	if testHookNewKeyCursor != nil {
		testHookNewKeyCursor()
	}
	c := &KeyCursor{
		key:       key,
		fs:        fs,
		seeks:     fs.locations(key, t, ascending),
		ascending: ascending,
	}
	return c
}

// ---- engine.go ----

type Engine struct {
	FileStore *FileStore
}

// createVarRefIterator-style query path: one cursor per series key.
func (e *Engine) buildCursor(seriesKey, field string, t int64, ascending bool) *KeyCursor {
	return e.FileStore.KeyCursor(seriesKey+"#!~#"+field, t, ascending)
}

// compactTSMLevel installs the result of a finished compaction.
func (e *Engine) compactTSMLevel(group []string, files []string) error {
	return e.FileStore.Replace(group, files)
}

func main() {
	fs := NewFileStore("/var/lib/influxdb/data/db0/rp0/1")
	r1, _ := NewTSMReader(fs.dir + "/000000001-000000001.tsm")
	r2, _ := NewTSMReader(fs.dir + "/000000002-000000001.tsm")
	fs.Add(r1, r2)
	e := &Engine{FileStore: fs}

	inCursor := make(chan struct{})
	compactionQueued := make(chan struct{})
	testHookNewKeyCursor = func() {
		close(inCursor)
		<-compactionQueued
	}

	var wg sync.WaitGroup
	wg.Add(2)
	// SELECT value FROM cpu WHERE host = 'a'
	go func() {
		defer wg.Done()
		c := e.buildCursor("cpu,host=a", "value", 0, true)
		fmt.Println("cursor blocks:", len(c.seeks))
	}()
	<-inCursor
	// The level compaction of files 1 and 2 finishes.
	go func() {
		defer wg.Done()
		if err := e.compactTSMLevel([]string{r1.Path(), r2.Path()},
			[]string{fs.dir + "/000000002-000000002.tsm.tmp"}); err != nil {
			fmt.Println(err)
		}
	}()
	time.Sleep(20 * time.Millisecond) // Replace queues on f.mu.Lock
	close(compactionQueued)
	wg.Wait()
	fmt.Println("done")
}
