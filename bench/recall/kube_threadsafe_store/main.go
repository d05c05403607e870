// Modelled on kubernetes client-go tools/cache/thread_safe_store.go: a
// threadSafeMap guarded by an RWMutex. Mutators take the write lock and call
// updateIndicesLocked, which assumes the lock is held and does not lock.
// Readers take RLock and call the read-only helper listLocked (no locking).
// GetMany loops over keys calling Get, which takes and releases the read lock
// on each iteration; GetMany itself never holds the lock.
package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

type pod struct {
	name string
	node string
}

type threadSafeMap struct {
	lock   sync.RWMutex
	items  map[string]pod
	byNode map[string]map[string]struct{}
}

func newThreadSafeMap() *threadSafeMap {
	return &threadSafeMap{items: make(map[string]pod), byNode: make(map[string]map[string]struct{})}
}

// updateIndicesLocked must be called with c.lock held for writing.
func (c *threadSafeMap) updateIndicesLocked(old *pod, newObj *pod, key string) {
	if old != nil {
		delete(c.byNode[old.node], key)
		if len(c.byNode[old.node]) == 0 {
			delete(c.byNode, old.node)
		}
	}
	if newObj != nil {
		if c.byNode[newObj.node] == nil {
			c.byNode[newObj.node] = make(map[string]struct{})
		}
		c.byNode[newObj.node][key] = struct{}{}
	}
}

func (c *threadSafeMap) Update(key string, obj pod) {
	c.lock.Lock()
	defer c.lock.Unlock()
	var oldp *pod
	if old, ok := c.items[key]; ok {
		oldp = &old
	}
	c.items[key] = obj
	c.updateIndicesLocked(oldp, &obj, key)
}

func (c *threadSafeMap) Delete(key string) {
	c.lock.Lock()
	defer c.lock.Unlock()
	if old, ok := c.items[key]; ok {
		c.updateIndicesLocked(&old, nil, key)
		delete(c.items, key)
	}
}

func (c *threadSafeMap) Get(key string) (pod, bool) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	p, ok := c.items[key]
	return p, ok
}

// listLocked must be called with c.lock held (read or write).
func (c *threadSafeMap) listLocked(keys map[string]struct{}) []pod {
	out := make([]pod, 0, len(keys))
	for k := range keys {
		out = append(out, c.items[k])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (c *threadSafeMap) ByNode(node string) []pod {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return c.listLocked(c.byNode[node])
}

// GetMany does not hold the lock; each Get locks for itself.
func (c *threadSafeMap) GetMany(keys []string) []pod {
	var out []pod
	for _, k := range keys {
		if p, ok := c.Get(k); ok {
			out = append(out, p)
		}
	}
	return out
}

func main() {
	c := newThreadSafeMap()
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				key := fmt.Sprintf("default/pod-%d", i)
				c.Update(key, pod{name: key, node: fmt.Sprintf("node-%d", (i+w)%3)})
				if i%5 == 0 {
					c.Delete(key)
				}
				_ = c.ByNode("node-1")
			}
		}(w)
	}
	wg.Wait()
	got := c.GetMany([]string{"default/pod-1", "default/pod-2", "default/pod-5"})
	names := make([]string, 0, len(got))
	for _, p := range got {
		names = append(names, p.name+"@"+p.node)
	}
	fmt.Println(strings.Join(names, ", "), "| node-0:", len(c.ByNode("node-0")))
}
