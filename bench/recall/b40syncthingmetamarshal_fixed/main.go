// Project: syncthing/syncthing, lib/db/meta.go (metadataTracker.toDB, Marshal, Created,
// Sequence), lib/db/set.go (FileSet.Update, FileSet.Sequence) and lib/db/backend (write
// transactions that run commit hooks), v1.29 (after the move to google.golang.org/protobuf).
// Issue: syncthing/syncthing#9906; fixed by PR #9910 "fix(db): correct unsafe RLock order
// (fixes #9906)": "Marshal() was called with the read lock held, and in turn called
// Created() which also takes the read lock ... there is a risk of deadlock if another call
// to lock the mutex happens concurrently".
//
// FileSet.Update commits its write transaction, which runs the metadata tracker's commit
// hook (a closure made by CommitHook); toDB read-locks m.mut (line 126) and calls Marshal,
// which builds the wire CountsSet and asks Created(), read-locking m.mut again (line 174).
// Sequence, called by the index sender for every batch, write-locks m.mut (line 168). When
// that writer queues between the two read locks, Created waits for the writer and the
// writer waits for toDB: the folder's database updates stop for good. main starts an
// update and calls Sequence while the commit hook is encoding the counts.
//
// FIXED twin: the PR's fix, Marshal reads m.counts.Created itself (line 111) instead
// of calling the read-locking Created().
package main

import (
	"fmt"
	"sync"
	"time"
)

type DeviceID string

const LocalDeviceID DeviceID = "local"

// ---- lib/db/backend ----

type WriteTransaction interface {
	Put(key, val []byte) error
	Commit() error
}

type CommitHook func(WriteTransaction) error

type memoryBackend struct {
	mut  sync.Mutex
	data map[string][]byte
}

type memTransaction struct {
	b     *memoryBackend
	batch map[string][]byte
	hooks []CommitHook
}

func (b *memoryBackend) NewWriteTransaction(hooks ...CommitHook) (WriteTransaction, error) {
	return &memTransaction{b: b, batch: map[string][]byte{}, hooks: hooks}, nil
}

func (t *memTransaction) Put(key, val []byte) error {
	t.batch[string(key)] = val
	return nil
}

func (t *memTransaction) Commit() error {
	for _, hook := range t.hooks {
		if err := hook(t); err != nil {
			return err
		}
	}
	t.b.mut.Lock()
	for k, v := range t.batch {
		t.b.data[k] = v
	}
	t.b.mut.Unlock()
	return nil
}

// ---- lib/db/meta.go ----

type Counts struct {
	DeviceID DeviceID
	Files    int
	Sequence int64
}

type CountsSet struct {
	Counts  []Counts
	Created int64 // unix nanos
}

// wireCountsSet stands for the generated dbproto.CountsSet.
type wireCountsSet struct {
	counts  []string
	created int64
}

type metadataTracker struct {
	counts  CountsSet
	indexes map[DeviceID]int
	mut     sync.RWMutex
	dirty   bool
}

func (c Counts) toWire() string {
	time.Sleep(50 * time.Millisecond) // protobuf encoding of one device's counts
	return fmt.Sprintf("%s:%d:%d", c.DeviceID, c.Files, c.Sequence)
}

// Marshal returns the protobuf representation of the metadataTracker
func (m *metadataTracker) Marshal() ([]byte, error) {
	wire := &wireCountsSet{}
	for _, c := range m.counts.Counts {
		wire.counts = append(wire.counts, c.toWire())
	}
	wire.created = m.counts.Created // called with the read lock held; no Created()
	return []byte(fmt.Sprint(wire.counts, wire.created)), nil
}

func (m *metadataTracker) CommitHook(folder []byte) CommitHook {
	return func(t WriteTransaction) error {
		return m.toDB(t, folder)
	}
}

// toDB saves the marshalled metadataTracker to the given db, under the key
// corresponding to the given folder
func (m *metadataTracker) toDB(t WriteTransaction, folder []byte) error {
	key := append([]byte("meta/"), folder...)

	m.mut.RLock()
	defer m.mut.RUnlock()

	if !m.dirty {
		return nil
	}

	bs, err := m.Marshal()
	if err != nil {
		return err
	}
	err = t.Put(key, bs)
	if err == nil {
		m.dirty = false
	}
	return err
}

// countsPtr returns a pointer to the corresponding Counts struct; mutex held.
func (m *metadataTracker) countsPtr(dev DeviceID) *Counts {
	idx, ok := m.indexes[dev]
	if !ok {
		idx = len(m.counts.Counts)
		m.counts.Counts = append(m.counts.Counts, Counts{DeviceID: dev})
		m.indexes[dev] = idx
	}
	return &m.counts.Counts[idx]
}

// addFile adds a file to the counts, adjusting the sequence number as appropriate
func (m *metadataTracker) addFile(dev DeviceID, seq int64) {
	m.mut.Lock()
	defer m.mut.Unlock()
	m.dirty = true
	cp := m.countsPtr(dev)
	cp.Files++
	if seq > cp.Sequence {
		cp.Sequence = seq
	}
}

func (m *metadataTracker) Sequence(dev DeviceID) int64 {
	m.mut.Lock()
	defer m.mut.Unlock()
	return m.countsPtr(dev).Sequence
}

func (m *metadataTracker) Created() time.Time {
	m.mut.RLock()
	defer m.mut.RUnlock()
	return time.Unix(0, m.counts.Created)
}

// ---- lib/db/set.go ----

type FileSet struct {
	folder      string
	db          *memoryBackend
	meta        *metadataTracker
	updateMutex sync.Mutex
}

func (s *FileSet) Update(device DeviceID, names []string) error {
	s.updateMutex.Lock()
	defer s.updateMutex.Unlock()

	t, err := s.db.NewWriteTransaction(s.meta.CommitHook([]byte(s.folder)))
	if err != nil {
		return err
	}
	for _, name := range names {
		seq := s.meta.Sequence(device) + 1
		t.Put([]byte(s.folder+"/"+name), []byte(name))
		s.meta.addFile(device, seq)
	}
	return t.Commit()
}

func (s *FileSet) Sequence(device DeviceID) int64 {
	return s.meta.Sequence(device)
}

func main() {
	meta := &metadataTracker{indexes: map[DeviceID]int{}}
	meta.counts.Created = time.Now().UnixNano()
	fs := &FileSet{folder: "default", db: &memoryBackend{data: map[string][]byte{}}, meta: meta}
	fs.Update("peer", []string{"a"})

	done := make(chan error)
	go func() { done <- fs.Update(LocalDeviceID, []string{"b", "c"}) }() // scanner
	time.Sleep(30 * time.Millisecond)
	go func() { // index sender
		fmt.Println("local sequence:", fs.Sequence(LocalDeviceID))
		done <- nil
	}()
	fmt.Println(<-done, <-done)
}
