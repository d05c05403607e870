// Pattern: etcd server/etcdserver/api/v2store node + store.worldLock:
// public entry points take the store lock once; recursive helpers that walk
// parent/children links are "Locked" variants that never lock again.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type Store struct {
	worldLock sync.RWMutex
	root      *Node
	index     uint64
}

type Node struct {
	store    *Store
	name     string
	parent   *Node
	children map[string]*Node
	value    string
}

func NewStore() *Store {
	s := &Store{}
	s.root = &Node{store: s, name: "", children: map[string]*Node{}}
	return s
}

// pathLocked builds the full key; caller holds n.store.worldLock (R or W).
func (n *Node) pathLocked() string {
	if n.parent == nil {
		return ""
	}
	return n.parent.pathLocked() + "/" + n.name
}

// Path is the public variant: it locks once and delegates.
func (n *Node) Path() string {
	n.store.worldLock.RLock()
	defer n.store.worldLock.RUnlock()
	return n.pathLocked()
}

// reprLocked walks children recursively without re-locking.
func (n *Node) reprLocked(sb *strings.Builder) {
	fmt.Fprintf(sb, "%s=%q;", n.pathLocked(), n.value)
	for _, c := range n.children {
		c.reprLocked(sb)
	}
}

func (s *Store) internalGetLocked(key string) *Node {
	cur := s.root
	for _, part := range strings.Split(strings.Trim(key, "/"), "/") {
		if part == "" {
			continue
		}
		next, ok := cur.children[part]
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

func (s *Store) Set(key, value string) {
	s.worldLock.Lock()
	defer s.worldLock.Unlock()
	cur := s.root
	for _, part := range strings.Split(strings.Trim(key, "/"), "/") {
		next, ok := cur.children[part]
		if !ok {
			next = &Node{store: s, name: part, parent: cur, children: map[string]*Node{}}
			cur.children[part] = next
		}
		cur = next
	}
	cur.value = value
	s.index++
}

func (s *Store) Get(key string) (string, bool) {
	s.worldLock.RLock()
	defer s.worldLock.RUnlock()
	n := s.internalGetLocked(key)
	if n == nil {
		return "", false
	}
	var sb strings.Builder
	n.reprLocked(&sb)
	return sb.String(), true
}

func main() {
	s := NewStore()
	s.Set("/a/b/c", "v0")
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				s.Set(fmt.Sprintf("/a/b/w%d/k%d", w, i%10), fmt.Sprint(i))
			}
		}(w)
	}
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				s.Get("/a/b")
				s.worldLock.RLock()
				n := s.internalGetLocked("/a/b/c")
				s.worldLock.RUnlock()
				if n != nil {
					_ = n.Path()
				}
			}
		}()
	}
	wg.Wait()
	v, _ := s.Get("/a/b/c")
	fmt.Println("index", s.index, "repr", v)
}
