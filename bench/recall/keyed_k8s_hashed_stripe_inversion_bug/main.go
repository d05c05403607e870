// Modeled on Kubernetes' k8s.io/utils/keymutex hashed KeyMutex (a slice of
// sync.Mutex stripes indexed by fnv(key) % n, reached through an accessor)
// as used by a kubelet-style pod worker next to a node-info cache.
//
// BUGGY: AB-BA inversion between a hashed key stripe and cache.mu.
//   - SyncPod holds the stripe for uid (keys.LockKey(uid) -> lockFor) and
//     then takes c.mu at main.go:48.
//   - EvictNode holds c.mu and then takes a stripe via keys.LockKey(uid)
//     at main.go:61.
//
// SyncPod(uid) and EvictNode on the node running uid (or any pod whose uid
// hashes to the same stripe) deadlock: each holds the lock the other wants.
package main

import (
	"fmt"
	"hash/fnv"
	"sync"
)

type hashedKeyMutex struct {
	mutexes []sync.Mutex
}

func NewHashed(n int) *hashedKeyMutex { return &hashedKeyMutex{mutexes: make([]sync.Mutex, n)} }

func (km *hashedKeyMutex) lockFor(id string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(id))
	return &km.mutexes[h.Sum32()%uint32(len(km.mutexes))]
}

func (km *hashedKeyMutex) LockKey(id string)   { km.lockFor(id).Lock() }
func (km *hashedKeyMutex) UnlockKey(id string) { km.lockFor(id).Unlock() }

type NodeCache struct {
	mu      sync.Mutex
	podNode map[string]string // pod uid -> node
	status  map[string]string // pod uid -> phase
	keys    *hashedKeyMutex
}

// SyncPod: stripe(uid) -> c.mu
func (c *NodeCache) SyncPod(uid, phase string) {
	c.keys.LockKey(uid)
	defer c.keys.UnlockKey(uid)

	c.mu.Lock()
	c.status[uid] = phase
	c.mu.Unlock()
}

// EvictNode: c.mu -> stripe(uid) (inverted)
func (c *NodeCache) EvictNode(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid, n := range c.podNode {
		if n != node {
			continue
		}
		c.keys.LockKey(uid)
		delete(c.podNode, uid)
		delete(c.status, uid)
		c.keys.UnlockKey(uid)
	}
}

func main() {
	c := &NodeCache{podNode: map[string]string{}, status: map[string]string{}, keys: NewHashed(4)}
	for i := 0; i < 8; i++ {
		c.podNode[fmt.Sprint("pod-", i)] = fmt.Sprint("node-", i%2)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func(i int) { defer wg.Done(); c.SyncPod(fmt.Sprint("pod-", i), "Running") }(i)
		go func(i int) { defer wg.Done(); c.EvictNode(fmt.Sprint("node-", i%2)) }(i)
	}
	wg.Wait()
	fmt.Println(len(c.podNode))
}
