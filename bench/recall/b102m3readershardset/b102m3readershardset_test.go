// Project: m3db/m3 (src/dbnode/storage/namespace_readers.go, namespace.go, database.go, lease_verifier.go, storage/block/lease.go), dbnode 1.x, February 2025 (PR #4323).
// Bug: since namespaceReaderManager tracked the shard set, dbNamespace.AssignShardSet called mgr.assignShardSet (mgr mutex) while db.AssignShardSet held the database lock and the namespace lock, while a peer's FetchBlocksMetadataV2 returned its reader through namespaceReaderManager.put, which holds the mgr mutex while it asks the lease manager for the latest volume and the lease verifier reads the flush state through db.FlushState (database read lock). Node decommissioning deadlocked AB-BA on the database lock and the reader manager mutex (PR #4323 moved the shard set out of the reader manager and passes it to tick instead).
package b102m3readershardset

import (
	"sync"
	"testing"
	"time"
)

type shardSet map[uint32]struct{}

type LeaseDescriptor struct {
	Namespace  string
	Shard      uint32
	BlockStart int64
}

type LeaseState struct{ Volume int }

type LeaseVerifier interface {
	LatestState(d LeaseDescriptor) (LeaseState, error)
}

// leaseManager mirrors storage/block/lease.go (lock released before calling the verifier).
type leaseManager struct {
	sync.Mutex
	verifier LeaseVerifier
}

func (m *leaseManager) OpenLatestLease(leaser any, d LeaseDescriptor) (LeaseState, error) {
	m.Lock()
	verifier := m.verifier
	m.Unlock()
	return verifier.LatestState(d)
}

type flushStateRetriever interface {
	FlushState(namespace string, shard uint32, blockStart int64) (int, error)
}

type leaseVerifier struct{ flushStateRetriever flushStateRetriever }

func (v *leaseVerifier) LatestState(d LeaseDescriptor) (LeaseState, error) {
	cold, err := v.flushStateRetriever.FlushState(d.Namespace, d.Shard, d.BlockStart)
	return LeaseState{Volume: cold}, err
}

type fileSetReader struct {
	shard      uint32
	blockStart int64
	volume     int
}

type namespaceReaderManager struct {
	sync.Mutex
	namespace         string
	blockLeaseManager *leaseManager
	openReaders       map[LeaseDescriptor]*fileSetReader
	shardSet          shardSet
}

func (m *namespaceReaderManager) latestVolume(shard uint32, blockStart int64) (int, error) {
	state, err := m.blockLeaseManager.OpenLatestLease(m, LeaseDescriptor{m.namespace, shard, blockStart})
	return state.Volume, err
}

func (m *namespaceReaderManager) assignShardSet(s shardSet) {
	m.Lock()
	defer m.Unlock()
	m.shardSet = s
}

func (m *namespaceReaderManager) tick() {
	m.Lock()
	defer m.Unlock()
	for key := range m.openReaders {
		if _, ok := m.shardSet[key.Shard]; !ok {
			delete(m.openReaders, key) // the shard is no longer owned by this node
		}
	}
}

func (m *namespaceReaderManager) get(shard uint32, blockStart int64) (*fileSetReader, error) {
	volume, err := m.latestVolume(shard, blockStart)
	if err != nil {
		return nil, err
	}
	return &fileSetReader{shard: shard, blockStart: blockStart, volume: volume}, nil
}

func (m *namespaceReaderManager) put(r *fileSetReader) error {
	m.Lock()
	defer m.Unlock()
	latest, err := m.latestVolume(r.shard, r.blockStart)
	if err != nil || latest > r.volume {
		return err
	}
	m.openReaders[LeaseDescriptor{m.namespace, r.shard, r.blockStart}] = r
	return nil
}

type blockRetriever interface{ AssignShardSet(s shardSet) }

type dbShard struct {
	id                 uint32
	namespaceReaderMgr *namespaceReaderManager
}

func (s *dbShard) FetchBlocksMetadataV2(blockStart int64, send func(*fileSetReader)) error {
	reader, err := s.namespaceReaderMgr.get(s.id, blockStart)
	if err != nil {
		return err
	}
	send(reader) // stream the metadata page, then return the reader to the cache
	return s.namespaceReaderMgr.put(reader)
}

type dbNamespace struct {
	sync.RWMutex
	shardSet           shardSet
	blockRetriever     blockRetriever
	namespaceReaderMgr *namespaceReaderManager
}

func (n *dbNamespace) AssignShardSet(s shardSet) {
	n.Lock()
	n.shardSet = s
	if br := n.blockRetriever; br != nil {
		br.AssignShardSet(s)
	}
	if mgr := n.namespaceReaderMgr; mgr != nil {
		mgr.assignShardSet(s)
	}
	n.Unlock()
}

func (n *dbNamespace) Tick() {
	n.namespaceReaderMgr.tick()
}

func (n *dbNamespace) FlushState(shardID uint32, blockStart int64) (int, error) {
	n.RLock()
	defer n.RUnlock()
	return 0, nil
}

type db struct {
	sync.RWMutex
	namespaces map[string]*dbNamespace
}

func (d *db) AssignShardSet(s shardSet) {
	d.Lock()
	defer d.Unlock()
	for _, ns := range d.namespaces {
		ns.AssignShardSet(s)
	}
}

func (d *db) FlushState(namespace string, shardID uint32, blockStart int64) (int, error) {
	d.RLock() // namespaceFor
	n := d.namespaces[namespace]
	d.RUnlock()
	return n.FlushState(shardID, blockStart)
}

type retrieverFunc func(shardSet)

func (f retrieverFunc) AssignShardSet(s shardSet) { f(s) }

func TestB102m3readershardset(t *testing.T) {
	d := &db{namespaces: map[string]*dbNamespace{}}
	lm := &leaseManager{verifier: &leaseVerifier{flushStateRetriever: d}}
	mgr := &namespaceReaderManager{namespace: "metrics", blockLeaseManager: lm, openReaders: map[LeaseDescriptor]*fileSetReader{}}
	retrieverLocked := make(chan struct{})
	ns := &dbNamespace{namespaceReaderMgr: mgr, blockRetriever: retrieverFunc(func(shardSet) {
		close(retrieverLocked)
		time.Sleep(100 * time.Millisecond) // the retriever reopens its seekers
	})}
	d.namespaces["metrics"] = ns
	shard := &dbShard{id: 7, namespaceReaderMgr: mgr}

	done := make(chan struct{}, 2)
	go func() { // peer bootstrap streaming blocks metadata from this node
		err := shard.FetchBlocksMetadataV2(0, func(*fileSetReader) {
			go func() { // topology change: the node is being decommissioned
				d.AssignShardSet(shardSet{3: {}})
				done <- struct{}{}
			}()
			<-retrieverLocked
		})
		if err != nil {
			t.Error(err)
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}
