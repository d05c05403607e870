// Project: C-Pro/geche (generic in-memory caches for Go), KVCache with the
// iterator API.
// Files/functions: kv_cache.go: KVCache.Snapshot, KVCache.AllByPrefix (the
// returned iter.Seq2 closure), KVCache.Set, KVCache.len.
// Reference: C-Pro/geche PR #23 "avoid recursive RLock in KVCache.Snapshot".
//
// Snapshot read-locks kv.mux and then builds the copy by calling
// kv.AllByPrefix("") and running the returned iterator; the iterator closure
// read-locks kv.mux again for the whole walk. Go's RWMutex is not reentrant:
// if a writer (Set or Del) calls Lock between the two RLocks, the writer waits
// for Snapshot's first read lock and the second RLock waits behind the
// pending writer, so Snapshot, the writer and every later reader hang. The
// fix walks the trie with an internal, lock-free iterator while holding the
// single read lock taken by Snapshot.
package main

import (
	"fmt"
	"iter"
	"sort"
	"sync"
)

type byteSlice interface {
	~string | ~[]byte
}

type trieCacheNode struct {
	b          byte
	terminal   bool
	children   []*trieCacheNode
	valueIndex int
}

func (n *trieCacheNode) findChild(c byte) (int, bool) {
	i := sort.Search(len(n.children), func(i int) bool { return n.children[i].b >= c })
	return i, i < len(n.children) && n.children[i].b == c
}

// KVCache stores values ordered by key using a trie index.
type KVCache[K byteSlice, V any] struct {
	values []V
	trie   *trieCacheNode
	mux    sync.RWMutex
}

func NewKVCache[K byteSlice, V any]() *KVCache[K, V] {
	return &KVCache[K, V]{trie: &trieCacheNode{}}
}

// Set sets the value for the key.
func (kv *KVCache[K, V]) Set(key K, value V) {
	kv.mux.Lock()
	defer kv.mux.Unlock()
	kv.insert(key, value)
}

func (kv *KVCache[K, V]) insert(key K, value V) {
	node := kv.trie
	for _, c := range []byte(key) {
		idx, found := node.findChild(c)
		if !found {
			child := &trieCacheNode{b: c}
			node.children = append(node.children, nil)
			copy(node.children[idx+1:], node.children[idx:])
			node.children[idx] = child
		}
		node = node.children[idx]
	}
	if node.terminal {
		kv.values[node.valueIndex] = value
		return
	}
	kv.values = append(kv.values, value)
	node.valueIndex = len(kv.values) - 1
	node.terminal = true
}

// AllByPrefix returns an iterator over values with keys starting with prefix.
// The iterator holds RLock on the cache for the whole iteration.
func (kv *KVCache[K, V]) AllByPrefix(prefix string) iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		kv.mux.RLock()
		defer kv.mux.RUnlock()

		kv.allByPrefix(prefix)(yield)
	}
}

// allByPrefix is the lock-free iterator; the caller must hold kv.mux.
func (kv *KVCache[K, V]) allByPrefix(prefix string) iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		node := kv.trie
		for i := 0; i < len(prefix); i++ {
			idx, found := node.findChild(prefix[i])
			if !found {
				return
			}
			node = node.children[idx]
		}
		kv.walk(node, []byte(prefix), yield)
	}
}

func (kv *KVCache[K, V]) walk(node *trieCacheNode, path []byte, yield func(string, V) bool) bool {
	if node.terminal && !yield(string(path), kv.values[node.valueIndex]) {
		return false
	}
	for _, child := range node.children {
		if !kv.walk(child, append(path, child.b), yield) {
			return false
		}
	}
	return true
}

// Snapshot returns a copy of the cache.
func (kv *KVCache[K, V]) Snapshot() map[string]V {
	kv.mux.RLock()
	defer kv.mux.RUnlock()

	res := make(map[string]V, kv.len())

	seq := kv.allByPrefix("")
	seq(func(k string, v V) bool {
		res[k] = v
		return true
	})
	return res
}

func (kv *KVCache[K, V]) len() int { return len(kv.values) }

func main() {
	cache := NewKVCache[string, int]()
	for i := 0; i < 64; i++ {
		cache.Set(fmt.Sprintf("user/%03d", i), i)
	}

	const rounds = 200000
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // periodic state dump
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			_ = cache.Snapshot()
		}
	}()
	go func() { // updates from the request path
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			cache.Set(fmt.Sprintf("user/%03d", i%64), i)
		}
	}()
	wg.Wait()
	fmt.Println("snapshot size", len(cache.Snapshot()))
}
