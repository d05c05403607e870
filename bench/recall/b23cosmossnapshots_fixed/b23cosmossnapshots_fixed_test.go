// Project: cosmos/cosmos-sdk (snapshots/manager.go)
// Bug: Manager.Restore locked m.mtx and unlocked it manually on the happy
// path, but the early return for an unsupported snapshot format skipped the
// unlock; the next snapshot operation (Create / begin) blocks forever.
// Fix: defer m.mtx.Unlock() right after taking the lock.
package b23cosmossnapshots_fixed

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

const CurrentFormat uint32 = 3

type operation string

const (
	opNone     operation = ""
	opSnapshot operation = "snapshot"
	opPrune    operation = "prune"
	opRestore  operation = "restore"
)

var (
	ErrConflict        = errors.New("conflict")
	ErrUnknownFormat   = errors.New("unknown snapshot format")
	ErrInvalidMetadata = errors.New("invalid snapshot metadata")
)

type Metadata struct{ ChunkHashes [][]byte }

type Snapshot struct {
	Height   uint64
	Format   uint32
	Chunks   uint32
	Hash     []byte
	Metadata Metadata
}

type Snapshotter interface {
	Snapshot(height uint64) ([]byte, error)
	SnapshotFormat() uint32
}

type multiStore struct{ version uint64 }

func (s *multiStore) Snapshot(height uint64) ([]byte, error) {
	return []byte(fmt.Sprintf("iavl@%d", height)), nil
}
func (s *multiStore) SnapshotFormat() uint32 { return CurrentFormat }

type Manager struct {
	multistore Snapshotter
	interval   uint64
	keepRecent uint32

	mtx                sync.Mutex
	operation          operation
	chRestore          chan<- uint32
	restoreChunkHashes [][]byte
	restoreChunkIndex  uint32
	snapshots          map[uint64]*Snapshot
}

func NewManager(ms Snapshotter) *Manager {
	return &Manager{multistore: ms, interval: 1000, keepRecent: 2, snapshots: map[uint64]*Snapshot{}}
}

func (m *Manager) begin(op operation) error {
	m.mtx.Lock()
	defer m.mtx.Unlock()
	return m.beginLocked(op)
}

func (m *Manager) beginLocked(op operation) error {
	switch op {
	case opSnapshot, opPrune, opRestore:
		if m.operation != opNone {
			return fmt.Errorf("a %v operation is in progress: %w", m.operation, ErrConflict)
		}
		m.operation = op
		return nil
	default:
		return fmt.Errorf("unknown snapshot operation %q", op)
	}
}

func (m *Manager) end() {
	m.mtx.Lock()
	defer m.mtx.Unlock()
	m.operation = opNone
}

func (m *Manager) Create(height uint64) (*Snapshot, error) {
	if err := m.begin(opSnapshot); err != nil {
		return nil, err
	}
	defer m.end()
	data, err := m.multistore.Snapshot(height)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Height: height, Format: m.multistore.SnapshotFormat(), Chunks: 1, Hash: data}
	m.snapshots[height] = s
	return s, nil
}

func (m *Manager) Restore(snapshot Snapshot) error {
	if snapshot.Chunks == 0 {
		return fmt.Errorf("no chunks: %w", ErrInvalidMetadata)
	}
	if uint32(len(snapshot.Metadata.ChunkHashes)) != snapshot.Chunks {
		return fmt.Errorf("snapshot has %v chunk hashes, but %v chunks: %w",
			uint32(len(snapshot.Metadata.ChunkHashes)), snapshot.Chunks, ErrInvalidMetadata)
	}
	m.mtx.Lock()
	defer m.mtx.Unlock()
	if snapshot.Format != m.multistore.SnapshotFormat() {
		return fmt.Errorf("snapshot format %v: %w", snapshot.Format, ErrUnknownFormat)
	}
	if snapshot.Height == 0 {
		return errors.New("cannot restore snapshot at height 0")
	}
	if err := m.beginLocked(opRestore); err != nil {
		return err
	}
	m.restoreChunkHashes = snapshot.Metadata.ChunkHashes
	m.restoreChunkIndex = 0
	return nil
}

func TestProbe(t *testing.T) {
	m := NewManager(&multiStore{version: 4000})
	err := m.Restore(Snapshot{Height: 3000, Format: 1, Chunks: 1, Metadata: Metadata{ChunkHashes: [][]byte{{0x01}}}})
	if !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("unexpected error %v", err)
	}

	created := make(chan error)
	go func() {
		_, err := m.Create(4000)
		created <- err
	}()
	if err := <-created; err != nil {
		t.Fatal(err)
	}
}
