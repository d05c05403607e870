// Command b72etcdtreeindexvisit models etcd's mvcc in-memory key index
// (server/storage/mvcc/index.go, treeIndex) and the write transaction that
// deletes a key range (kvstore_txn.go, storeTxnWrite.deleteRange).
//
// Modelled on etcd mvcc, no specific upstream bug. treeIndex.visit holds the
// index read lock while it runs the func it was given for every keyIndex in
// the range. Upstream deleteRange first collects the keys with
// kvindex.Range and only then tombstones each one. Here deleteRange
// tombstones from inside the visit func, so storeTxnWrite.delete reaches
// treeIndex.Tombstone, which asks for the write lock of the index whose read
// lock the same goroutine is still holding, and the DeleteRange never
// returns.
//
// The fixed twin collects the live keys in the visit func and tombstones them
// after visit has returned, as upstream does.
package main

import (
	"fmt"
	"sort"
	"sync"
)

type revision struct {
	main int64
	sub  int64
}

type keyIndex struct {
	key       string
	revs      []revision
	tombstone bool
}

func (ki *keyIndex) put(rev revision) {
	ki.revs = append(ki.revs, rev)
	ki.tombstone = false
}

func (ki *keyIndex) isTombstoned() bool { return ki.tombstone }

type index interface {
	Put(key string, rev revision)
	Range(key, end string, atRev int64) []string
	Tombstone(key string, rev revision) error
	visit(key, end string, f func(ki *keyIndex) bool)
}

type treeIndex struct {
	sync.RWMutex
	tree map[string]*keyIndex
}

func newTreeIndex() index {
	return &treeIndex{tree: map[string]*keyIndex{}}
}

func (ti *treeIndex) Put(key string, rev revision) {
	ti.Lock()
	defer ti.Unlock()
	ki, ok := ti.tree[key]
	if !ok {
		ki = &keyIndex{key: key}
		ti.tree[key] = ki
	}
	ki.put(rev)
}

func (ti *treeIndex) sortedKeys(key, end string) []string {
	var keys []string
	for k := range ti.tree {
		if k >= key && (end == "" || k < end) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func (ti *treeIndex) visit(key, end string, f func(ki *keyIndex) bool) {
	ti.RLock()
	defer ti.RUnlock()
	for _, k := range ti.sortedKeys(key, end) {
		if !f(ti.tree[k]) {
			return
		}
	}
}

func (ti *treeIndex) Range(key, end string, atRev int64) []string {
	var keys []string
	ti.visit(key, end, func(ki *keyIndex) bool {
		if !ki.isTombstoned() && ki.revs[0].main <= atRev {
			keys = append(keys, ki.key)
		}
		return true
	})
	return keys
}

func (ti *treeIndex) Tombstone(key string, rev revision) error {
	ti.Lock()
	defer ti.Unlock()
	ki, ok := ti.tree[key]
	if !ok || ki.isTombstoned() {
		return fmt.Errorf("mvcc: revision %d not found for %q", rev.main, key)
	}
	ki.revs = append(ki.revs, rev)
	ki.tombstone = true
	return nil
}

type store struct {
	mu         sync.RWMutex
	kvindex    index
	currentRev int64
	backend    map[revision]string
}

type storeTxnWrite struct {
	s        *store
	beginRev int64
	changes  []string
}

func (s *store) Write() *storeTxnWrite {
	s.mu.Lock()
	return &storeTxnWrite{s: s, beginRev: s.currentRev}
}

func (tw *storeTxnWrite) End() {
	if len(tw.changes) > 0 {
		tw.s.currentRev++
	}
	tw.s.mu.Unlock()
}

func (tw *storeTxnWrite) Put(key, value string) {
	rev := revision{main: tw.beginRev + 1, sub: int64(len(tw.changes))}
	tw.s.backend[rev] = value
	tw.s.kvindex.Put(key, rev)
	tw.changes = append(tw.changes, key)
}

func (tw *storeTxnWrite) DeleteRange(key, end string) int64 {
	return tw.deleteRange(key, end)
}

func (tw *storeTxnWrite) deleteRange(key, end string) int64 {
	var live []string
	tw.s.kvindex.visit(key, end, func(ki *keyIndex) bool {
		if !ki.isTombstoned() {
			live = append(live, ki.key)
		}
		return true
	})
	for _, k := range live {
		tw.delete(k)
	}
	return int64(len(live))
}

func (tw *storeTxnWrite) delete(key string) {
	rev := revision{main: tw.beginRev + 1, sub: int64(len(tw.changes))}
	tw.s.backend[rev] = ""
	tw.tombstone(key, rev)
	tw.changes = append(tw.changes, key)
}

func (tw *storeTxnWrite) tombstone(key string, rev revision) {
	if err := tw.s.kvindex.Tombstone(key, rev); err != nil {
		fmt.Println("cannot tombstone:", err)
	}
}

func main() {
	s := &store{kvindex: newTreeIndex(), backend: map[revision]string{}}

	tw := s.Write()
	for _, k := range []string{"/registry/pods/a", "/registry/pods/b", "/registry/pods/c", "/registry/svc/x"} {
		tw.Put(k, "v1")
	}
	tw.End()

	done := make(chan struct{})
	go func() {
		defer close(done)
		keys := s.kvindex.Range("/registry/", "/registry0", 1)
		fmt.Println("watch sync saw", len(keys), "keys")
	}()
	<-done

	tw = s.Write()
	n := tw.DeleteRange("/registry/pods/", "/registry/pods0")
	tw.End()
	fmt.Println("deleted", n, "pods, revision", s.currentRev)
}
