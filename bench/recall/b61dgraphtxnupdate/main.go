// Project: dgraph-io/dgraph v24 (alpha), May 2024.
// Files/functions: worker/draft.go: node.applyMutations, node.concMutations;
// worker/mutation.go: runMutation; posting/index.go: List.AddMutationWithIndex;
// posting/list.go: List.addMutationInternal, List.getMutation;
// posting/lists.go: LocalCache.Get, LocalCache.UpdateDeltasAndDiscardLists;
// posting/oracle.go: Txn.Update, Txn.addConflictKey.
// PR: dgraph-io/dgraph#9085 "Fix(core): Fix deadlock in runMutation and error
// handling" (DGR-477, "dgraph v24 alpha 2 hangs").
//
// applyMutations runs the edges of a proposal concurrently (concMutations,
// one goroutine per chunk, each calling runMutation). runMutation fetches
// the posting list through the transaction's LocalCache and calls
// AddMutationWithIndex, which holds the list's lock while it updates the
// mutation layer and the indexes, and finally records the conflict key with
// txn.addConflictKey, which locks the Txn: List -> Txn. When the proposal's
// context times out, concMutations returns the error while those goroutines
// keep going, and applyMutations still called txn.Update, which locks the Txn
// and, through LocalCache.UpdateDeltasAndDiscardLists, read-locks every
// posting list of the transaction to move its mutation into the deltas:
// Txn -> List. The timed-out proposal and the still-running runMutation wait
// for each other. The fix does not call txn.Update when the transaction
// failed.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type DirectedEdge struct {
	Entity uint64
	Attr   string
	Value  string
}

type Mutations struct {
	StartTs uint64
	Edges   []*DirectedEdge
}

// --- posting/list.go ---

type List struct {
	sync.RWMutex
	key         string
	mutationMap map[uint64][]string
}

func (l *List) addMutationInternal(ctx context.Context, txn *Txn, t *DirectedEdge) error {
	l.mutationMap[txn.StartTs] = append(l.mutationMap[txn.StartTs], t.Value)
	// tokenize the value and update the index and count keys
	time.Sleep(40 * time.Millisecond)
	conflictKey := t.Entity<<8 | uint64(len(t.Attr))
	txn.addConflictKey(conflictKey)
	return nil
}

func (l *List) getMutation(startTs uint64) []byte {
	l.RLock()
	defer l.RUnlock()
	if vals, ok := l.mutationMap[startTs]; ok {
		return []byte(fmt.Sprint(vals))
	}
	return nil
}

// --- posting/index.go ---

func (l *List) AddMutationWithIndex(ctx context.Context, edge *DirectedEdge, txn *Txn) error {
	l.Lock()
	defer l.Unlock()
	return l.addMutationInternal(ctx, txn, edge)
}

// --- posting/lists.go ---

type LocalCache struct {
	sync.RWMutex
	startTs uint64
	deltas  map[string][]byte
	plists  map[string]*List
}

func (lc *LocalCache) Get(key string) (*List, error) {
	lc.Lock()
	defer lc.Unlock()
	if pl, ok := lc.plists[key]; ok {
		return pl, nil
	}
	pl := &List{key: key, mutationMap: make(map[uint64][]string)}
	lc.plists[key] = pl
	return pl, nil
}

// UpdateDeltasAndDiscardLists updates the delta cache before removing the stored posting lists.
func (lc *LocalCache) UpdateDeltasAndDiscardLists() {
	lc.Lock()
	defer lc.Unlock()
	for key, pl := range lc.plists {
		if data := pl.getMutation(lc.startTs); len(data) > 0 {
			lc.deltas[key] = data
		}
	}
	lc.plists = make(map[string]*List)
}

// --- posting/oracle.go ---

type Txn struct {
	StartTs uint64
	// Fields which can changed after init
	sync.Mutex
	conflicts map[uint64]struct{}
	cache     *LocalCache
}

func NewTxn(startTs uint64) *Txn {
	return &Txn{StartTs: startTs, cache: &LocalCache{startTs: startTs,
		deltas: make(map[string][]byte), plists: make(map[string]*List)}}
}

func (txn *Txn) Get(key string) (*List, error) { return txn.cache.Get(key) }

func (txn *Txn) addConflictKey(conflictKey uint64) {
	txn.Lock()
	defer txn.Unlock()
	if txn.conflicts == nil {
		txn.conflicts = make(map[uint64]struct{})
	}
	txn.conflicts[conflictKey] = struct{}{}
}

// Update calls UpdateDeltasAndDiscardLists on the local cache.
func (txn *Txn) Update(ctx context.Context) {
	txn.Lock()
	defer txn.Unlock()
	txn.cache.UpdateDeltasAndDiscardLists()
}

// --- worker ---

var mutationsInFlight sync.WaitGroup

func runMutation(ctx context.Context, edge *DirectedEdge, txn *Txn) error {
	key := fmt.Sprintf("%s|%#x", edge.Attr, edge.Entity)
	plist, err := txn.Get(key)
	if err != nil {
		return err
	}
	return plist.AddMutationWithIndex(ctx, edge, txn)
}

type node struct{ id uint64 }

func (n *node) concMutations(ctx context.Context, m *Mutations, txn *Txn) error {
	errCh := make(chan error, len(m.Edges))
	for _, edge := range m.Edges {
		mutationsInFlight.Add(1)
		go func(e *DirectedEdge) {
			defer mutationsInFlight.Done()
			errCh <- runMutation(ctx, e, txn)
		}(edge)
	}
	for range m.Edges {
		select {
		case err := <-errCh:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (n *node) applyMutations(ctx context.Context, m *Mutations) error {
	txn := NewTxn(m.StartTs)
	err := n.concMutations(ctx, m, txn)
	txn.Update(ctx)
	return err
}

func main() {
	n := &node{id: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	m := &Mutations{StartTs: 42, Edges: []*DirectedEdge{{Entity: 0x2711, Attr: "name", Value: "Alice"}}}
	err := n.applyMutations(ctx, m)
	fmt.Println("proposal applied:", err, errors.Is(err, context.DeadlineExceeded))
	mutationsInFlight.Wait()
}
