// Project: influxdata/influxdb (tsdb/engine/tsm1/cache.go, engine.go), v0.11 development, March 2016 (PR #6006 "Fix deadlock when running backup", after #5807 added the cache commit lock).
// Bug: Cache.Snapshot takes the cache commit mutex and leaves it held until ClearSnapshot, so a snapshot compaction keeps it while it writes the TSM file and then needs the engine read lock to swap the new file in. A backup that arrives meanwhile calls Engine.WriteSnapshot, which takes the engine write lock and calls Cache.Snapshot, blocking on the commit mutex: the compaction waits for e.mu and the backup holds e.mu waiting for the commit mutex, and every write blocks behind them. The fix removed the commit mutex and makes a second Snapshot return ErrSnapshotInProgress.
package b102influxbackupsnapshot

import (
	"sync"
	"testing"
	"time"
)

type Value struct {
	UnixNano int64
	V        float64
}

type Cache struct {
	commit        sync.Mutex
	mu            sync.RWMutex
	store         map[string][]Value
	size          uint64
	snapshots     []*Cache
	snapshotsSize uint64
}

func NewCache() *Cache { return &Cache{store: map[string][]Value{}} }

func (c *Cache) Write(key string, values []Value) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store[key] = append(c.store[key], values...)
	c.size += uint64(len(values) * 16)
}

// Snapshot takes a snapshot of the current cache, adds it to the slice of
// caches being flushed and resets the current cache. The commit lock is held
// until ClearSnapshot so that only one snapshot is in flight.
func (c *Cache) Snapshot() *Cache {
	c.commit.Lock()
	c.mu.Lock()
	defer c.mu.Unlock()
	snapshot := &Cache{store: c.store, size: c.size}
	c.store = map[string][]Value{}
	c.snapshots = append(c.snapshots, snapshot)
	c.snapshotsSize += snapshot.size
	c.size = 0
	return snapshot
}

func (c *Cache) ClearSnapshot(snapshot *Cache) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.snapshots {
		if s == snapshot {
			c.snapshots = append(c.snapshots[:i], c.snapshots[i+1:]...)
			c.snapshotsSize -= s.size
			break
		}
	}
	c.commit.Unlock()
}

type WAL struct {
	mu     sync.Mutex
	closed []string
}

func (l *WAL) CloseSegment() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = append(l.closed, "_00001.wal")
	return nil
}

func (l *WAL) ClosedSegments() ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.closed...), nil
}

type fileStore interface {
	NextGeneration() int
	Replace(oldFiles, newFiles []string) error
}

type Compactor struct{ FileStore fileStore }

func (c *Compactor) WriteSnapshot(cache *Cache) ([]string, error) {
	_ = c.FileStore.NextGeneration() // write the cache into a new level-1 TSM file
	return []string{"000000001-000000001.tsm"}, nil
}

type Engine struct {
	mu        sync.RWMutex
	WAL       *WAL
	Cache     *Cache
	Compactor *Compactor
	FileStore fileStore
}

func (e *Engine) WritePoints(key string, values []Value) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	e.Cache.Write(key, values)
	return nil
}

// WriteSnapshot flushes the cache to a new TSM file.
func (e *Engine) WriteSnapshot() error {
	closedFiles, snapshot, compactor, err := func() ([]string, *Cache, *Compactor, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if err := e.WAL.CloseSegment(); err != nil {
			return nil, nil, nil, err
		}
		segments, err := e.WAL.ClosedSegments()
		if err != nil {
			return nil, nil, nil, err
		}
		snapshot := e.Cache.Snapshot()
		return segments, snapshot, e.Compactor, nil
	}()
	if err != nil {
		return err
	}
	return e.writeSnapshotAndCommit(closedFiles, snapshot, compactor)
}

func (e *Engine) writeSnapshotAndCommit(closedFiles []string, snapshot *Cache, compactor *Compactor) error {
	newFiles, err := compactor.WriteSnapshot(snapshot)
	if err != nil {
		return err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if err := e.FileStore.Replace(nil, newFiles); err != nil {
		return err
	}
	e.Cache.ClearSnapshot(snapshot)
	_ = closedFiles // remove the closed WAL segments
	return nil
}

// Backup snapshots the cache, then streams the TSM files under the read lock.
func (e *Engine) Backup() error {
	if err := e.WriteSnapshot(); err != nil {
		return err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return nil
}

type testFileStore struct {
	gen      int
	onNewGen func(gen int)
}

func (f *testFileStore) NextGeneration() int {
	f.gen++
	f.onNewGen(f.gen)
	return f.gen
}

func (f *testFileStore) Replace(oldFiles, newFiles []string) error { return nil }

func TestB102influxbackupsnapshot(t *testing.T) {
	writing := make(chan struct{})
	fs := &testFileStore{onNewGen: func(gen int) {
		if gen == 1 {
			close(writing)
			time.Sleep(100 * time.Millisecond) // writing the snapshot TSM file
		}
	}}
	e := &Engine{WAL: &WAL{}, Cache: NewCache(), Compactor: &Compactor{FileStore: fs}, FileStore: fs}
	_ = e.WritePoints("cpu,host=a#!~#value", []Value{{1, 1.5}})
	done := make(chan error, 2)
	go func() { done <- e.WriteSnapshot() }() // periodic cache snapshot compaction
	go func() {                               // influxd backup
		<-writing
		if err := e.Backup(); err != nil {
			t.Log("backup:", err)
		}
		done <- nil
	}()
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
