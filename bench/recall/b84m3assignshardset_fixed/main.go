// Project: m3db/m3 (src/dbnode/storage/database.go, bootstrap.go, mediator.go), dbnode around v0.15-v1.0, 2020 (approximate).
// Bug: db.AssignShardSet holds the database's embedded RWMutex for writing when the topology hands the node new shards, and queueBootstrapWithLock ran the follow-up bootstrap synchronously through the mediator; bootstrapManager.bootstrap asks the database for its owned namespaces with db.OwnedNamespaces, which takes d.RLock on the same mutex, so the topology watch goroutine hangs during a reshard (fixed by triggering the bootstrap from a new goroutine).
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type ShardSet struct{ ids []uint32 }

func (s ShardSet) AllIDs() []uint32 { return s.ids }

type BootstrapState int

const (
	BootstrapNotStarted BootstrapState = iota
	Bootstrapping
	Bootstrapped
)

type BootstrapResult struct{ AlreadyBootstrapping bool }

var errBootstrapEnqueued = errors.New("database bootstrapping enqueued bootstrap")

type databaseNamespace interface {
	AssignShardSet(shardSet ShardSet)
	Bootstrap() error
}

type dbNamespace struct {
	sync.RWMutex
	id     string
	shards map[uint32]BootstrapState
}

func (n *dbNamespace) AssignShardSet(shardSet ShardSet) {
	n.Lock()
	defer n.Unlock()
	for _, id := range shardSet.AllIDs() {
		if _, ok := n.shards[id]; !ok {
			n.shards[id] = BootstrapNotStarted
		}
	}
}
func (n *dbNamespace) Bootstrap() error {
	n.Lock()
	defer n.Unlock()
	for id := range n.shards {
		n.shards[id] = Bootstrapped
	}
	return nil
}

type database interface {
	OwnedNamespaces() ([]databaseNamespace, error)
}
type databaseMediator interface {
	Bootstrap() (BootstrapResult, error)
}

type bootstrapManager struct {
	sync.RWMutex
	database                    database
	state                       BootstrapState
	hasPending                  bool
	lastBootstrapCompletionTime time.Time
}

func (m *bootstrapManager) LastBootstrapCompletionTime() time.Time {
	m.RLock()
	defer m.RUnlock()
	return m.lastBootstrapCompletionTime
}
func (m *bootstrapManager) Bootstrap() (BootstrapResult, error) {
	m.Lock()
	switch m.state {
	case Bootstrapping:
		// NB(r): Already bootstrapping, queue this up to bootstrap again.
		m.hasPending = true
		m.Unlock()
		return BootstrapResult{AlreadyBootstrapping: true}, errBootstrapEnqueued
	default:
		m.state = Bootstrapping
	}
	m.Unlock()

	for {
		if err := m.bootstrap(); err != nil {
			return BootstrapResult{}, err
		}
		m.Lock()
		currPending := m.hasPending
		m.hasPending = false
		m.Unlock()
		if !currPending {
			break
		}
	}
	m.Lock()
	m.state = Bootstrapped
	m.lastBootstrapCompletionTime = time.Now()
	m.Unlock()
	return BootstrapResult{}, nil
}
func (m *bootstrapManager) bootstrap() error {
	namespaces, err := m.database.OwnedNamespaces()
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		if err := ns.Bootstrap(); err != nil {
			return err
		}
	}
	return nil
}

// mediator embeds the bootstrap manager (tick, flush and cleanup managers elided).
type mediator struct {
	*bootstrapManager
}

type db struct {
	sync.RWMutex
	namespaces map[string]databaseNamespace
	shardSet   ShardSet
	mediator   databaseMediator
	bootstraps int
}

func (d *db) OwnedNamespaces() ([]databaseNamespace, error) {
	d.RLock()
	defer d.RUnlock()
	res := make([]databaseNamespace, 0, len(d.namespaces))
	for _, ns := range d.namespaces {
		res = append(res, ns)
	}
	return res, nil
}
func (d *db) Bootstrap() error {
	d.Lock()
	d.bootstraps++
	d.Unlock()
	_, err := d.mediator.Bootstrap()
	return err
}
func (d *db) hasReceivedNewShardsWithLock(incoming ShardSet) bool {
	// Shard IDs are assigned in increasing order in this program.
	return len(incoming.AllIDs()) > len(d.shardSet.AllIDs())
}

func (d *db) AssignShardSet(shardSet ShardSet) {
	d.Lock()
	defer d.Unlock()
	receivedNewShards := d.hasReceivedNewShardsWithLock(shardSet)
	d.shardSet = shardSet
	for _, ns := range d.namespaces {
		ns.AssignShardSet(shardSet)
	}
	if receivedNewShards { // only trigger a bootstrap if the node received new shards
		d.queueBootstrapWithLock()
	}
}

func (d *db) queueBootstrapWithLock() {
	// Only perform a bootstrap if at least one bootstrap has already occurred.
	if d.bootstraps > 0 {
		// NB(r): Trigger another bootstrap, if already bootstrapping this will
		// enqueue a new bootstrap to execute before the current bootstrap
		// completes.
		go func() {
			if result, err := d.mediator.Bootstrap(); err != nil && !result.AlreadyBootstrapping {
				fmt.Println("error bootstrapping:", err)
			}
		}()
	}
}

func main() {
	d := &db{namespaces: map[string]databaseNamespace{}}
	for _, name := range []string{"default", "metrics_10s_48h"} {
		d.namespaces[name] = &dbNamespace{id: name, shards: map[uint32]BootstrapState{}}
	}
	bm := &bootstrapManager{database: d}
	med := &mediator{bootstrapManager: bm}
	d.mediator = med
	d.AssignShardSet(ShardSet{ids: []uint32{0, 1, 2}})
	_ = d.Bootstrap()
	first := bm.LastBootstrapCompletionTime()
	// Topology watch: the placement gave this node shards 3 and 4.
	d.AssignShardSet(ShardSet{ids: []uint32{0, 1, 2, 3, 4}})
	for !bm.LastBootstrapCompletionTime().After(first) {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("reshard bootstrap done")
}
