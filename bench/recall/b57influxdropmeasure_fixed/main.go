// Project: influxdata/influxdb 1.3 (TSM engine), August 2017. Files/functions:
// tsdb/engine/tsm1/engine.go (Engine.DeleteMeasurement, deleteMeasurement, deleteSeries,
// DeleteSeriesRange, disableLevelCompactions, WriteSnapshot, writeSnapshotAndCommit,
// addToIndexFromKey, the replace callback installed in NewEngine), tsm1/file_store.go
// (FileStore.Replace), tsdb/shard.go (MeasurementFieldSet.DeleteWithLock/CreateFieldsIfNotExists).
// Issue: influxdata/influxdb#8713, fixed by PR #8714 "Fix deadlock when deleting
// measurement and writing to it".
//
// Snapshot goroutine: writeSnapshotAndCommit read-locks e.mu around FileStore.Replace;
// Replace runs the file store's replace callback, which loads the keys of the new TSM file
// into the index through addToIndexFromKey -> fieldset.CreateFieldsIfNotExists (field-set
// read lock). DROP MEASUREMENT: DeleteMeasurement deletes once outside the field-set lock,
// then again inside fieldset.DeleteWithLock (field-set write lock) to catch series written
// in between; that inner deleteMeasurement goes through deleteSeries -> DeleteSeriesRange ->
// disableLevelCompactions, which write-locks e.mu. Engine lock then field set on one side,
// field set then engine lock on the other: when a client keeps writing to the measurement
// being dropped and the cache snapshots at the wrong moment, both goroutines hang.
//
// The fix passes the callback as a parameter (FileStore.ReplaceWithCallback) and only
// compactions pass it, so a snapshot no longer touches the field set while holding e.mu.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type MeasurementFields struct{ fields map[string]byte }

type MeasurementFieldSet struct {
	mu     sync.RWMutex
	fields map[string]*MeasurementFields
}

func (fs *MeasurementFieldSet) CreateFieldsIfNotExists(name string) *MeasurementFields {
	fs.mu.RLock()
	mf := fs.fields[name]
	fs.mu.RUnlock()
	if mf != nil {
		return mf
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if mf = fs.fields[name]; mf == nil {
		mf = &MeasurementFields{fields: map[string]byte{}}
		fs.fields[name] = mf
	}
	return mf
}

// DeleteWithLock executes fn and removes a field set from a measurement under lock.
func (fs *MeasurementFieldSet) DeleteWithLock(name string, fn func() error) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fn(); err != nil {
		return err
	}
	delete(fs.fields, name)
	return nil
}

type Index struct {
	mu     sync.RWMutex
	series map[string][]string // measurement -> series keys
}

func (i *Index) CreateSeriesIfNotExists(key, name string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.series[name] = append(i.series[name], key)
}

func (i *Index) MeasurementSeriesKeysByExpr(name string) ([]string, error) {
	defer time.Sleep(50 * time.Millisecond) // expanding the measurement's series
	i.mu.RLock()
	defer i.mu.RUnlock()
	return append([]string(nil), i.series[name]...), nil
}

type Cache struct {
	mu              sync.Mutex
	store, snapshot map[string][]float64
}

func (c *Cache) Write(key string, v float64) {
	c.mu.Lock()
	c.store[key] = append(c.store[key], v)
	c.mu.Unlock()
}

func (c *Cache) ClearSnapshot() { c.mu.Lock(); c.snapshot = nil; c.mu.Unlock() }

func (c *Cache) Snapshot() map[string][]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snapshot, c.store = c.store, map[string][]float64{}
	return c.snapshot
}

type TSMFile interface{ Keys() []string }
type tsmReader struct{ keys []string }

func (r *tsmReader) Keys() []string { return r.keys }

type FileStore struct{ files []TSMFile }

// Replace replaces oldFiles with newFiles.
func (f *FileStore) Replace(oldFiles []TSMFile, newFiles []TSMFile) error {
	return f.ReplaceWithCallback(oldFiles, newFiles, nil)
}

// ReplaceWithCallback replaces oldFiles with newFiles and calls updatedFn with
// the files to be added the FileStore.
func (f *FileStore) ReplaceWithCallback(oldFiles, newFiles []TSMFile, updatedFn func(r []TSMFile)) error {
	time.Sleep(100 * time.Millisecond) // rename the .tmp files into place, mmap them
	f.files = append(f.files, newFiles...)
	if updatedFn != nil {
		updatedFn(newFiles)
	}
	return nil
}

type Engine struct {
	mu           sync.RWMutex
	index        *Index
	fieldset     *MeasurementFieldSet
	Cache        *Cache
	FileStore    *FileStore
	levelWorkers int
}

func NewEngine(index *Index, fieldset *MeasurementFieldSet) *Engine {
	return &Engine{index: index, fieldset: fieldset, FileStore: &FileStore{},
		Cache: &Cache{store: map[string][]float64{}}}
}

// compactGroup replaces a compacted group of TSM files; only compactions load
// the keys of the new files into the index, and they do not hold e.mu.
func (e *Engine) compactGroup(group, files []TSMFile) error {
	return e.FileStore.ReplaceWithCallback(group, files, func(newFiles []TSMFile) {
		// Load any new series keys to the index.
		for _, r := range newFiles {
			for _, key := range r.Keys() {
				e.addToIndexFromKey(key, 0)
			}
		}
	})
}

func (e *Engine) addToIndexFromKey(key string, fieldType byte) {
	seriesKey, field, _ := strings.Cut(key, "#!~#")
	name, _, _ := strings.Cut(seriesKey, ",")
	mf := e.fieldset.CreateFieldsIfNotExists(name)
	_, _ = mf, field // mf.CreateFieldIfNotExists(field, fieldType)
	e.index.CreateSeriesIfNotExists(seriesKey, name)
}

func (e *Engine) disableLevelCompactions(wait bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.levelWorkers++ // stop the level compaction goroutines
}

func (e *Engine) enableLevelCompactions(wait bool) { e.mu.Lock(); e.levelWorkers--; e.mu.Unlock() }

// WriteSnapshot will snapshot the cache and write a new TSM file with its contents.
func (e *Engine) WriteSnapshot() error {
	e.mu.Lock()
	snapshot := e.Cache.Snapshot()
	e.mu.Unlock()
	return e.writeSnapshotAndCommit(snapshot)
}

func (e *Engine) writeSnapshotAndCommit(snapshot map[string][]float64) error {
	time.Sleep(10 * time.Millisecond) // Compactor.WriteSnapshot writes the .tmp file
	r := &tsmReader{}
	for k := range snapshot {
		r.keys = append(r.keys, k)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	// update the file store with these new files
	if err := e.FileStore.Replace(nil, []TSMFile{r}); err != nil {
		return err
	}
	e.Cache.ClearSnapshot()
	return nil
}

// DeleteSeriesRange removes the values between min and max (inclusive) from all series.
func (e *Engine) DeleteSeriesRange(seriesKeys []string, min, max int64) error {
	if len(seriesKeys) == 0 {
		return nil
	}
	// Disable and abort running compactions so that tombstones added to existing
	// tsm files don't get removed.
	e.disableLevelCompactions(true)
	defer e.enableLevelCompactions(true)
	return nil // tombstone the series in the cache and the TSM files
}

func (e *Engine) deleteSeries(seriesKeys []string) error {
	return e.DeleteSeriesRange(seriesKeys, -1<<63, 1<<63-1)
}

func (e *Engine) deleteMeasurement(name string) error {
	keys, err := e.index.MeasurementSeriesKeysByExpr(name)
	if err != nil || len(keys) == 0 {
		return err
	}
	return e.deleteSeries(keys)
}

// DeleteMeasurement deletes a measurement and all related series.
func (e *Engine) DeleteMeasurement(name string) error {
	// Delete the bulk of data outside of the fields lock.
	if err := e.deleteMeasurement(name); err != nil {
		return err
	}
	// Under lock, delete any series created deletion.
	return e.fieldset.DeleteWithLock(name, func() error {
		return e.deleteMeasurement(name)
	})
}

// WritePoints is the shard write path: fields and series first, then the cache.
func (e *Engine) WritePoints(name, seriesKey, field string, v float64) {
	e.fieldset.CreateFieldsIfNotExists(name)
	e.index.CreateSeriesIfNotExists(seriesKey, name)
	e.Cache.Write(seriesKey+"#!~#"+field, v)
}

func main() {
	e := NewEngine(&Index{series: map[string][]string{}},
		&MeasurementFieldSet{fields: map[string]*MeasurementFields{}})
	e.WritePoints("cpu", "cpu,host=a", "value", 1)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // DROP MEASUREMENT cpu
		defer wg.Done()
		fmt.Println("drop measurement:", e.DeleteMeasurement("cpu"))
	}()
	time.Sleep(25 * time.Millisecond)
	e.WritePoints("cpu", "cpu,host=b", "value", 2) // a client keeps writing to cpu
	time.Sleep(35 * time.Millisecond)
	go func() { // the cache snapshotter
		defer wg.Done()
		fmt.Println("snapshot:", e.WriteSnapshot())
	}()
	wg.Wait()
	fmt.Println("compaction:", e.compactGroup(nil, nil))
	fmt.Println("done")
}
