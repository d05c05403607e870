// Project: cosmos/iavl v1.0.0 (the IAVL+ tree used by the Cosmos SDK store).
// Files/functions: nodedb.go: nodeDB.DeleteVersionsFrom, getLatestVersion,
// incrVersionReaders, decrVersionReaders; mutable_tree.go:
// MutableTree.LoadVersionForOverwriting, GetImmutable; export.go:
// newExporter, Exporter.Next, Exporter.Close.
// Reference: cosmos/iavl#842, fixed by PR #843 "fix(nodedb): prevent deadlock
// by releasing DeleteVersionsFrom mutex on error" (backported to v1.x).
//
// DeleteVersionsFrom takes ndb.mtx to scan ndb.versionReaders and refuses to
// delete a version that still has active readers (an open Exporter or
// iterator registers itself with incrVersionReaders). On that refusal it
// returned the error with ndb.mtx still locked. The caller
// (LoadVersionForOverwriting, used for rollbacks) just propagates the error,
// so the next operation on the node database that takes ndb.mtx blocks for
// ever; here the exporter's Close -> decrVersionReaders. The fix unlocks
// ndb.mtx before returning the error.
package main

import (
	"fmt"
	"sync"
)

type nodeDB struct {
	mtx            sync.Mutex
	latestVersion  int64
	roots          map[int64][]byte
	versionReaders map[int64]uint32
}

func newNodeDB() *nodeDB {
	return &nodeDB{roots: map[int64][]byte{}, versionReaders: map[int64]uint32{}}
}

func (ndb *nodeDB) getLatestVersion() (int64, error) {
	ndb.mtx.Lock()
	latestVersion := ndb.latestVersion
	ndb.mtx.Unlock()
	return latestVersion, nil
}

func (ndb *nodeDB) saveRoot(hash []byte, version int64) error {
	ndb.mtx.Lock()
	defer ndb.mtx.Unlock()
	ndb.roots[version] = hash
	ndb.latestVersion = version
	return nil
}

func (ndb *nodeDB) incrVersionReaders(version int64) {
	ndb.mtx.Lock()
	defer ndb.mtx.Unlock()
	ndb.versionReaders[version]++
}

func (ndb *nodeDB) decrVersionReaders(version int64) {
	ndb.mtx.Lock()
	defer ndb.mtx.Unlock()
	if ndb.versionReaders[version] > 0 {
		ndb.versionReaders[version]--
	}
}

// DeleteVersionsFrom permanently deletes all tree versions from the given version upwards.
func (ndb *nodeDB) DeleteVersionsFrom(fromVersion int64) error {
	latest, err := ndb.getLatestVersion()
	if err != nil {
		return err
	}
	if latest < fromVersion {
		return nil
	}

	ndb.mtx.Lock()
	for v, r := range ndb.versionReaders {
		if v >= fromVersion && r != 0 {
			ndb.mtx.Unlock() // Unlock before exiting
			return fmt.Errorf("unable to delete version %v with %v active readers", v, r)
		}
	}
	ndb.mtx.Unlock()

	ndb.mtx.Lock()
	for v := fromVersion; v <= latest; v++ {
		delete(ndb.roots, v)
	}
	ndb.latestVersion = fromVersion - 1
	ndb.mtx.Unlock()
	return nil
}

type ImmutableTree struct {
	ndb     *nodeDB
	version int64
	root    []byte
}

type MutableTree struct {
	ndb     *nodeDB
	version int64
}

func (tree *MutableTree) SaveVersion() (int64, error) {
	version := tree.version + 1
	if err := tree.ndb.saveRoot([]byte(fmt.Sprintf("root-%d", version)), version); err != nil {
		return 0, err
	}
	tree.version = version
	return version, nil
}

func (tree *MutableTree) GetImmutable(version int64) (*ImmutableTree, error) {
	tree.ndb.mtx.Lock()
	root, ok := tree.ndb.roots[version]
	tree.ndb.mtx.Unlock()
	if !ok {
		return nil, fmt.Errorf("version %d does not exist", version)
	}
	return &ImmutableTree{ndb: tree.ndb, version: version, root: root}, nil
}

// LoadVersionForOverwriting attempts to load a tree at a previously committed
// version, deleting every later version.
func (tree *MutableTree) LoadVersionForOverwriting(targetVersion int64) error {
	if err := tree.ndb.DeleteVersionsFrom(targetVersion + 1); err != nil {
		return err
	}
	tree.version = targetVersion
	return nil
}

type ExportNode struct {
	Key     []byte
	Version int64
}

type Exporter struct {
	tree *ImmutableTree
	ch   chan *ExportNode
}

func newExporter(tree *ImmutableTree) (*Exporter, error) {
	exporter := &Exporter{tree: tree, ch: make(chan *ExportNode, 32)}
	tree.ndb.incrVersionReaders(tree.version)
	go exporter.export()
	return exporter, nil
}

func (tree *ImmutableTree) Export() (*Exporter, error) { return newExporter(tree) }

func (e *Exporter) export() {
	for i := 0; i < 3; i++ {
		e.ch <- &ExportNode{Key: []byte{byte('a' + i)}, Version: e.tree.version}
	}
	close(e.ch)
}

func (e *Exporter) Next() (*ExportNode, bool) {
	n, ok := <-e.ch
	return n, ok
}

func (e *Exporter) Close() {
	for range e.ch {
	}
	e.tree.ndb.decrVersionReaders(e.tree.version)
}

func main() {
	tree := &MutableTree{ndb: newNodeDB()}
	for i := 0; i < 3; i++ {
		if _, err := tree.SaveVersion(); err != nil {
			panic(err)
		}
	}

	// State sync snapshotter exports the latest version ...
	itree, err := tree.GetImmutable(3)
	if err != nil {
		panic(err)
	}
	exporter, _ := itree.Export()
	n, _ := exporter.Next()
	fmt.Println("exported", string(n.Key))

	// ... while a rollback tries to overwrite it.
	if err := tree.LoadVersionForOverwriting(2); err != nil {
		fmt.Println("rollback refused:", err)
	}

	exporter.Close()
	fmt.Println("exporter closed")
}
