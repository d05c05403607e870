// Project: micro/go-config, later go-micro's config package (loader/memory/memory.go: memory.Snapshot, loaded, Sync, watch; config.go config.Load), January 2019.
// Bug: memory.Snapshot read-locks the loader's embedded RWMutex for its whole body and then calls loaded(), which read-locks it again (and Sync, which write-locks it, when nothing is loaded yet); the watch goroutine that Load starts for each source takes the write lock to register its change set, and when that writer queues between the two read locks, config.Load, the watcher and every later reader hang (issue micro/go-config#75 "deadlock in memory loader").
// Fix: Snapshot calls loaded() without holding the lock and copies the snapshot under a short read lock afterwards (the shape go-micro's config/loader/memory still has).
package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// source.ChangeSet, source.Source, source.Watcher, reader.Reader, reader.Values, loader.Snapshot, loader.Loader
type (
	ChangeSet struct {
		Data   []byte
		Format string
		Source string
	}
	Source interface {
		Read() (*ChangeSet, error)
		Watch() (Watcher, error)
		String() string
	}
	Watcher interface{ Next() (*ChangeSet, error) }
	Values  interface{ Scan(v interface{}) error }
	Reader  interface {
		Merge(...*ChangeSet) (*ChangeSet, error)
		Values(*ChangeSet) (Values, error)
	}
	Snapshot struct {
		ChangeSet *ChangeSet
		Version   string
	}
	Loader interface {
		Load(...Source) error
		Snapshot() (*Snapshot, error)
		Sync() error
	}
)

type memory struct {
	reader Reader

	sync.RWMutex
	snap    *Snapshot    // the current snapshot
	vals    Values       // the current values
	sets    []*ChangeSet // all the sets
	sources []Source     // all the sources
}

func (m *memory) loaded() bool {
	m.RLock()
	loaded := m.vals != nil
	m.RUnlock()
	return loaded
}

func (m *memory) watch(idx int, s Source) {
	time.Sleep(10 * time.Millisecond) // the source watcher starts a little later
	m.Lock()
	m.sets = append(m.sets, &ChangeSet{Source: s.String()})
	m.Unlock()

	w, err := s.Watch()
	if err != nil {
		return
	}
	for {
		cs, err := w.Next()
		if err != nil {
			return
		}
		m.Lock()
		m.sets[idx] = cs
		if set, err := m.reader.Merge(m.sets...); err == nil {
			m.vals, _ = m.reader.Values(set)
			m.snap = &Snapshot{ChangeSet: set, Version: fmt.Sprintf("%d", time.Now().Unix())}
		}
		m.Unlock()
	}
}

// Sync loads all the sources, calls the parser and updates the config
func (m *memory) Sync() error {
	var sets []*ChangeSet
	m.Lock()
	for _, source := range m.sources {
		if ch, err := source.Read(); err == nil {
			sets = append(sets, ch)
		}
	}
	set, err := m.reader.Merge(sets...)
	if err == nil {
		m.vals, err = m.reader.Values(set)
		m.snap = &Snapshot{ChangeSet: set, Version: fmt.Sprintf("%d", time.Now().Unix())}
	}
	m.Unlock()
	return err
}

func (m *memory) Load(sources ...Source) error {
	for _, source := range sources {
		m.Lock()
		m.sources = append(m.sources, source)
		idx := len(m.sources) - 1
		m.Unlock()
		go m.watch(idx, source)
	}
	return m.Sync()
}

// Snapshot returns a snapshot of the current loaded config
func (m *memory) Snapshot() (*Snapshot, error) {
	time.Sleep(50 * time.Millisecond) // same window as before; no lock is held here now
	if m.loaded() {
		m.RLock()
		snap := *m.snap // loader.Copy
		m.RUnlock()
		return &snap, nil
	}

	// not loaded, sync
	if err := m.Sync(); err != nil {
		return nil, err
	}

	// make copy
	m.RLock()
	snap := *m.snap
	m.RUnlock()
	return &snap, nil
}

type config struct {
	loader Loader
	reader Reader

	sync.RWMutex
	vals Values
}

func (c *config) Load(sources ...Source) error {
	if err := c.loader.Load(sources...); err != nil {
		return err
	}
	snap, err := c.loader.Snapshot()
	if err != nil {
		return err
	}
	c.Lock()
	defer c.Unlock()
	c.vals, err = c.reader.Values(snap.ChangeSet)
	return err
}

func (c *config) Scan(v interface{}) error {
	c.RLock()
	defer c.RUnlock()
	return c.vals.Scan(v)
}

// json reader and a file source whose watcher waits for fsnotify events.
type jsonValues struct{ data []byte }

func (j *jsonValues) Scan(v interface{}) error { return json.Unmarshal(j.data, v) }

type jsonReader struct{}

func (jsonReader) Merge(sets ...*ChangeSet) (*ChangeSet, error) {
	merged := &ChangeSet{Format: "json", Source: "merged"}
	for _, s := range sets {
		if s != nil && len(s.Data) > 0 {
			merged.Data = s.Data // last source wins in this reduced reader
		}
	}
	return merged, nil
}

func (jsonReader) Values(cs *ChangeSet) (Values, error) { return &jsonValues{data: cs.Data}, nil }

type fileSource struct{ path, data string }

type fileWatcher struct{ events chan *ChangeSet }

func (w *fileWatcher) Next() (*ChangeSet, error) { return <-w.events, nil }

func (f *fileSource) Read() (*ChangeSet, error) {
	return &ChangeSet{Data: []byte(f.data), Format: "json", Source: "file"}, nil
}
func (f *fileSource) Watch() (Watcher, error) { return &fileWatcher{make(chan *ChangeSet)}, nil }
func (f *fileSource) String() string          { return "file" }

func main() {
	c := &config{loader: &memory{reader: jsonReader{}}, reader: jsonReader{}}
	if err := c.Load(&fileSource{path: "a.json", data: `{"hosts":{"db":"10.0.0.5:5432"}}`}); err != nil {
		panic(err)
	}
	var inst struct {
		Hosts map[string]string `json:"hosts"`
	}
	if err := c.Scan(&inst); err != nil {
		panic(err)
	}
	fmt.Println("db host:", inst.Hosts["db"])
}
