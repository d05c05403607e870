// Command b70etcdv2storerlock reproduces a recursive read-lock deadlock
// modelled on etcd's v2 store (server/etcdserver/api/v2store store.go and
// node.go), no specific upstream bug.
//
// store.Get holds s.worldLock.RLock while it converts the internal node
// tree into the NodeExtern returned to the client. Each internal node keeps
// a back-pointer n.store to the store it belongs to. While loading a
// directory, loadInternalNode walks the children through node.Repr, and
// Repr stamps the response with the store's current index through
// n.store.Index(), which read-locks worldLock a second time. Meanwhile a
// client write goes through store.Set and calls worldLock.Lock; it has to
// wait for the first reader, and from then on sync.RWMutex refuses new
// readers. The reader's nested RLock queues behind the pending writer, the
// writer waits for the reader, and both goroutines block on worldLock.
//
// The fix passes the index read under the outer read lock down to Repr
// instead of calling back into the locked Index accessor.
//
// This is the fixed twin: Repr receives the index as a parameter.
package main

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

type NodeExtern struct {
	Key           string
	Value         *string
	Dir           bool
	Nodes         []*NodeExtern
	ModifiedIndex uint64
	CreatedIndex  uint64
	EtcdIndex     uint64
}

type node struct {
	Path          string
	CreatedIndex  uint64
	ModifiedIndex uint64
	Parent        *node
	Value         string
	Children      map[string]*node
	store         *store
}

func newKV(s *store, nodePath, value string, index uint64, parent *node) *node {
	return &node{Path: nodePath, CreatedIndex: index, ModifiedIndex: index,
		Parent: parent, Value: value, store: s}
}

func newDir(s *store, nodePath string, index uint64, parent *node) *node {
	return &node{Path: nodePath, CreatedIndex: index, ModifiedIndex: index,
		Parent: parent, Children: make(map[string]*node), store: s}
}

func (n *node) IsDir() bool { return n.Children != nil }

func (n *node) IsHidden() bool {
	_, name := path.Split(n.Path)
	return strings.HasPrefix(name, "_")
}

func (n *node) List() []*node {
	nodes := make([]*node, 0, len(n.Children))
	for _, c := range n.Children {
		nodes = append(nodes, c)
	}
	return nodes
}

func (n *node) Repr(recursive, sorted bool, index uint64) *NodeExtern {
	if !n.IsDir() {
		v := n.Value
		return &NodeExtern{Key: n.Path, Value: &v, ModifiedIndex: n.ModifiedIndex,
			CreatedIndex: n.CreatedIndex, EtcdIndex: index}
	}
	ne := &NodeExtern{Key: n.Path, Dir: true, ModifiedIndex: n.ModifiedIndex,
		CreatedIndex: n.CreatedIndex}
	if !recursive {
		return ne
	}
	for _, child := range n.List() {
		if child.IsHidden() {
			continue
		}
		ne.Nodes = append(ne.Nodes, child.Repr(recursive, sorted, index))
	}
	if sorted {
		sort.Slice(ne.Nodes, func(i, j int) bool { return ne.Nodes[i].Key < ne.Nodes[j].Key })
	}
	return ne
}

func (eNode *NodeExtern) loadInternalNode(n *node, recursive, sorted bool) {
	if n.IsDir() {
		eNode.Dir = true
		children := n.List()
		index := n.store.CurrentIndex
		// directories with many children take a while to encode
		time.Sleep(200 * time.Millisecond)
		for _, child := range children {
			if child.IsHidden() {
				continue
			}
			eNode.Nodes = append(eNode.Nodes, child.Repr(recursive, sorted, index))
		}
		return
	}
	v := n.Value
	eNode.Value = &v
}

type store struct {
	Root         *node
	CurrentIndex uint64
	worldLock    sync.RWMutex
}

func newStore() *store {
	s := &store{}
	s.Root = newDir(s, "/", 0, nil)
	return s
}

func (s *store) Index() uint64 {
	s.worldLock.RLock()
	defer s.worldLock.RUnlock()
	return s.CurrentIndex
}

func (s *store) walk(nodePath string, create bool) (*node, error) {
	cur := s.Root
	for _, part := range strings.Split(strings.Trim(nodePath, "/"), "/") {
		next, ok := cur.Children[part]
		if !ok {
			if !create {
				return nil, fmt.Errorf("key not found: %s", nodePath)
			}
			next = newDir(s, path.Join(cur.Path, part), s.CurrentIndex, cur)
			cur.Children[part] = next
		}
		cur = next
	}
	return cur, nil
}

func (s *store) Get(nodePath string, recursive, sorted bool) (*NodeExtern, error) {
	s.worldLock.RLock()
	defer s.worldLock.RUnlock()
	n, err := s.walk(nodePath, false)
	if err != nil {
		return nil, err
	}
	e := &NodeExtern{Key: n.Path, ModifiedIndex: n.ModifiedIndex, CreatedIndex: n.CreatedIndex}
	e.loadInternalNode(n, recursive, sorted)
	return e, nil
}

func (s *store) Set(nodePath, value string) error {
	s.worldLock.Lock()
	defer s.worldLock.Unlock()
	dir, name := path.Split(nodePath)
	parent, err := s.walk(dir, true)
	if err != nil {
		return err
	}
	s.CurrentIndex++
	parent.Children[name] = newKV(s, nodePath, value, s.CurrentIndex, parent)
	return nil
}

func main() {
	s := newStore()
	for _, svc := range []string{"api", "auth", "billing"} {
		_ = s.Set("/registry/services/"+svc, `{"port":8080}`)
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		time.Sleep(50 * time.Millisecond)
		if err := s.Set("/registry/services/search", `{"port":9200}`); err != nil {
			fmt.Println("set:", err)
		}
	}()
	e, err := s.Get("/registry/services", true, true)
	if err != nil {
		fmt.Println("get:", err)
		return
	}
	for _, c := range e.Nodes {
		fmt.Printf("%s (index %d)\n", c.Key, c.EtcdIndex)
	}
	<-written
	fmt.Println("final index:", s.Index())
}
