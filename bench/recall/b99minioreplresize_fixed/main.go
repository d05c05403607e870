// Project: minio/minio (cmd/bucket-replication.go, ReplicationPool.queueReplicaTask / ResizeWorkers), RELEASE.2022-11 era.
// Bug: when the replication queue is full and replication_priority is "auto", queueReplicaTask read-locks
// p.mu and, still holding it, calls ResizeWorkers (and ResizeFailedWorkers) to grow the pool, which take p.mu
// for writing, so the goroutine scheduling the replication deadlocks on its own RWMutex and every later
// user of p.mu hangs (minio PR #16084 "Fix replication autoscaling deadlock", also fixed in #16083).
package main

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// Scaled-down versions of the real limits (500/50/100 and 8/2/4 in MinIO).
const (
	WorkerMaxLimit       = 50
	WorkerMinLimit       = 5
	WorkerAutoDefault    = 2
	MRFWorkerMaxLimit    = 8
	MRFWorkerMinLimit    = 2
	MRFWorkerAutoDefault = 1
)

var GlobalContext, globalCancel = context.WithCancel(context.Background())

type ReplicateObjectInfo struct{ Bucket, Name, VersionID string }
type MRFReplicateEntry struct{ Bucket, Object, VersionID string }

func (ri ReplicateObjectInfo) ToMRFEntry() MRFReplicateEntry {
	return MRFReplicateEntry{Bucket: ri.Bucket, Object: ri.Name, VersionID: ri.VersionID}
}

type ReplicationPool struct {
	activeWorkers    int32
	activeMRFWorkers int32
	ctx              context.Context
	mu               sync.RWMutex
	priority         string
	workerSize       int
	mrfWorkerSize    int
	replicaCh        chan ReplicateObjectInfo
	mrfReplicaCh     chan ReplicateObjectInfo
	workerKillCh     chan struct{}
	mrfWorkerKillCh  chan struct{}
	mrfSaveCh        chan MRFReplicateEntry
	slowTarget       chan struct{} // remote target that is slow to respond; workers block on it.
}

var globalReplicationPool *ReplicationPool

func NewReplicationPool(ctx context.Context, priority string) *ReplicationPool {
	var workers, failedWorkers int
	switch priority {
	case "fast":
		workers, failedWorkers = WorkerMaxLimit, MRFWorkerMaxLimit
	case "slow":
		workers, failedWorkers = WorkerMinLimit, MRFWorkerMinLimit
	default:
		workers, failedWorkers = WorkerAutoDefault, MRFWorkerAutoDefault
	}
	pool := &ReplicationPool{
		ctx:             ctx,
		priority:        priority,
		replicaCh:       make(chan ReplicateObjectInfo, 2),
		mrfReplicaCh:    make(chan ReplicateObjectInfo, 2),
		workerKillCh:    make(chan struct{}, workers),
		mrfWorkerKillCh: make(chan struct{}, failedWorkers),
		mrfSaveCh:       make(chan MRFReplicateEntry, 16),
		slowTarget:      make(chan struct{}),
	}
	pool.ResizeWorkers(workers)
	pool.ResizeFailedWorkers(failedWorkers)
	return pool
}

func (p *ReplicationPool) replicateObject(ri ReplicateObjectInfo) {
	select {
	case <-p.slowTarget:
	case <-p.ctx.Done():
	}
}

func (p *ReplicationPool) AddWorker() {
	for {
		select {
		case <-p.ctx.Done():
			return
		case oi := <-p.replicaCh:
			atomic.AddInt32(&p.activeWorkers, 1)
			p.replicateObject(oi)
			atomic.AddInt32(&p.activeWorkers, -1)
		case <-p.workerKillCh:
			return
		}
	}
}

func (p *ReplicationPool) AddMRFWorker() {
	for {
		select {
		case <-p.ctx.Done():
			return
		case oi := <-p.mrfReplicaCh:
			atomic.AddInt32(&p.activeMRFWorkers, 1)
			p.replicateObject(oi)
			atomic.AddInt32(&p.activeMRFWorkers, -1)
		case <-p.mrfWorkerKillCh:
			return
		}
	}
}

func (p *ReplicationPool) ActiveWorkers() int    { return int(atomic.LoadInt32(&p.activeWorkers)) }
func (p *ReplicationPool) ActiveMRFWorkers() int { return int(atomic.LoadInt32(&p.activeMRFWorkers)) }

// ResizeWorkers sets replication workers pool to new size
func (p *ReplicationPool) ResizeWorkers(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.workerSize < n {
		p.workerSize++
		go p.AddWorker()
	}
	for p.workerSize > n {
		p.workerSize--
		go func() { p.workerKillCh <- struct{}{} }()
	}
}

func (p *ReplicationPool) ResizeFailedWorkers(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.mrfWorkerSize < n {
		p.mrfWorkerSize++
		go p.AddMRFWorker()
	}
	for p.mrfWorkerSize > n {
		p.mrfWorkerSize--
		go func() { p.mrfWorkerKillCh <- struct{}{} }()
	}
}

func (p *ReplicationPool) queueMRFSave(entry MRFReplicateEntry) {
	select {
	case <-GlobalContext.Done():
	case p.mrfSaveCh <- entry:
	default:
	}
}

func (p *ReplicationPool) queueReplicaTask(ri ReplicateObjectInfo) {
	select {
	case <-GlobalContext.Done():
	case p.replicaCh <- ri:
	default:
		globalReplicationPool.queueMRFSave(ri.ToMRFEntry())
		p.mu.RLock()
		prio := p.priority
		p.mu.RUnlock()
		switch prio {
		case "fast":
			fmt.Println("WARNING: Unable to keep up with incoming traffic")
		case "slow":
			fmt.Println("WARNING: Unable to keep up with incoming traffic - we recommend increasing replication priority")
		default:
			if p.ActiveWorkers() < WorkerMaxLimit {
				p.mu.RLock()
				workers := int(math.Min(float64(p.workerSize+1), WorkerMaxLimit))
				p.mu.RUnlock()
				p.ResizeWorkers(workers)
			}
			if p.ActiveMRFWorkers() < MRFWorkerMaxLimit {
				p.mu.RLock()
				workers := int(math.Min(float64(p.mrfWorkerSize+1), MRFWorkerMaxLimit))
				p.mu.RUnlock()
				p.ResizeFailedWorkers(workers)
			}
		}
	}
}

// scheduleReplication is what PutObject calls for asynchronous replication.
func scheduleReplication(bucket, object, versionID string) {
	globalReplicationPool.queueReplicaTask(ReplicateObjectInfo{Bucket: bucket, Name: object, VersionID: versionID})
}

func main() {
	defer globalCancel()
	globalReplicationPool = NewReplicationPool(GlobalContext, "auto")

	// A burst of PUTs while the replication target is slow: the workers are busy,
	// the queue fills, and the next PUT hits the auto-scaling branch.
	for i := 0; i < 8; i++ {
		scheduleReplication("photos", fmt.Sprintf("img-%03d.jpg", i), "v1")
	}
	fmt.Println("replication scheduled; active workers:", globalReplicationPool.ActiveWorkers())
	close(globalReplicationPool.slowTarget)
}
