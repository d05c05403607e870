// Project: cadence-workflow/cadence, formerly uber/cadence (common/persistence/nosql/sharded_nosql_store.go)
// Bug: shardedNosqlStoreImpl.getShard lazily connects to a DB shard. On a miss it takes the
// write lock, double-checks the map and calls connectToShard; if connecting failed it returned
// the error without unlocking, so every later getShard/Close blocks on the leaked lock
// (issue #6492, reported by a static analyzer).
// Upstream fix: PR #6493 "Fix deadlock in sharded nosql store": `defer sn.Unlock()` right
// after `sn.Lock()`, so every return path releases the lock.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type ShardingError struct{ Message string }

func (e *ShardingError) Error() string { return e.Message }

type NoSQLConfig struct{ Hosts string }

type ShardedNoSQLConfig struct {
	DefaultShard string
	Connections  map[string]NoSQLConfig
}

type nosqlDB interface{ Close() }

type fakeDB struct{ name string }

func (d *fakeDB) Close() {}

type nosqlStore struct {
	db   nosqlDB
	name string
}

func (s nosqlStore) Close() { s.db.Close() }

type shardingPolicy interface {
	getHistoryShardName(shardID int) (string, error)
}

type modPolicy struct{ shards []string }

func (p modPolicy) getHistoryShardName(shardID int) (string, error) {
	return p.shards[shardID%len(p.shards)], nil
}

type shardedNosqlStoreImpl struct {
	sync.RWMutex
	config          ShardedNoSQLConfig
	connectedShards map[string]nosqlStore
	shardingPolicy  shardingPolicy
	newDB           func(cfg NoSQLConfig) (nosqlDB, error) // NewNoSQLDB in the real code
}

func (sn *shardedNosqlStoreImpl) GetStoreShardByHistoryShard(shardID int) (*nosqlStore, error) {
	shardName, err := sn.shardingPolicy.getHistoryShardName(shardID)
	if err != nil {
		return nil, err
	}
	return sn.getShard(shardName)
}

func (sn *shardedNosqlStoreImpl) getShard(shardName string) (*nosqlStore, error) {
	sn.RLock()
	shard, found := sn.connectedShards[shardName]
	sn.RUnlock()
	if found {
		return &shard, nil
	}

	if _, ok := sn.config.Connections[shardName]; !ok {
		return nil, &ShardingError{Message: fmt.Sprintf("Unknown db shard name: %v", shardName)}
	}

	sn.Lock()
	defer sn.Unlock()
	if shard, ok := sn.connectedShards[shardName]; ok { // read again to double-check
		return &shard, nil
	}

	s, err := sn.connectToShard(shardName)
	if err != nil {
		return nil, err
	}
	sn.connectedShards[shardName] = *s
	return s, nil
}

func (sn *shardedNosqlStoreImpl) connectToShard(shardName string) (*nosqlStore, error) {
	cfg := sn.config.Connections[shardName]
	db, err := sn.newDB(cfg)
	if err != nil {
		return nil, err
	}
	return &nosqlStore{db: db, name: shardName}, nil
}

func (sn *shardedNosqlStoreImpl) Close() {
	sn.RLock()
	defer sn.RUnlock()
	for _, shard := range sn.connectedShards {
		shard.Close()
	}
}

func main() {
	attempts := 0
	sn := &shardedNosqlStoreImpl{
		config: ShardedNoSQLConfig{
			DefaultShard: "shard-0",
			Connections:  map[string]NoSQLConfig{"shard-0": {Hosts: "cass-0"}, "shard-1": {Hosts: "cass-1"}},
		},
		connectedShards: map[string]nosqlStore{},
		shardingPolicy:  modPolicy{shards: []string{"shard-0", "shard-1"}},
		newDB: func(cfg NoSQLConfig) (nosqlDB, error) {
			attempts++
			if attempts == 1 {
				return nil, errors.New("gocql: no hosts available in the pool")
			}
			return &fakeDB{name: cfg.Hosts}, nil
		},
	}

	for shardID := 0; shardID < 4; shardID++ {
		s, err := sn.GetStoreShardByHistoryShard(shardID)
		if err != nil {
			fmt.Println("shard", shardID, "error:", err)
			continue
		}
		fmt.Println("shard", shardID, "->", s.name)
	}
	sn.Close()
}
