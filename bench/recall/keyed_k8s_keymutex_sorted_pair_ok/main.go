// Modeled on Kubernetes' k8s.io/utils/keymutex hashed KeyMutex (a fixed
// slice of sync.Mutex indexed by fnv(key) % n) as used by a volume attach
// controller that must lock both a volume and a node.
//
// CORRECT: LockPair takes the two stripe locks of one container in
// ascending stripe-index order (and only once if both keys share a stripe),
// so stripe -> stripe edges always go from lower to higher index. store.mu
// is taken only after the key locks (Attach, Detach) or alone (Count); it
// is never held while waiting for a stripe. No cycle.
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

func (km *hashedKeyMutex) hash(id string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32() % uint32(len(km.mutexes))
}

func (km *hashedKeyMutex) lockFor(id string) *sync.Mutex { return &km.mutexes[km.hash(id)] }

func (km *hashedKeyMutex) LockKey(id string)   { km.lockFor(id).Lock() }
func (km *hashedKeyMutex) UnlockKey(id string) { km.lockFor(id).Unlock() }

// LockPair locks the stripes of a and b in ascending stripe order.
func (km *hashedKeyMutex) LockPair(a, b string) (unlock func()) {
	lo, hi := a, b
	if km.hash(lo) > km.hash(hi) {
		lo, hi = hi, lo
	}
	first, second := km.lockFor(lo), km.lockFor(hi)
	if first == second {
		first.Lock()
		return first.Unlock
	}
	first.Lock()
	second.Lock()
	return func() { second.Unlock(); first.Unlock() }
}

type AttachStore struct {
	mu       sync.Mutex
	attached map[string]string // volume -> node
	keys     *hashedKeyMutex
}

func (s *AttachStore) Attach(volume, node string) {
	unlock := s.keys.LockPair(volume, node)
	defer unlock()
	s.mu.Lock()
	s.attached[volume] = node
	s.mu.Unlock()
}

func (s *AttachStore) Detach(node, volume string) {
	unlock := s.keys.LockPair(node, volume) // argument order irrelevant
	defer unlock()
	s.mu.Lock()
	delete(s.attached, volume)
	s.mu.Unlock()
}

func (s *AttachStore) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.attached)
}

func main() {
	s := &AttachStore{attached: map[string]string{}, keys: NewHashed(8)}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(2)
		v, n := fmt.Sprint("vol-", i%4), fmt.Sprint("node-", i%3)
		go func() { defer wg.Done(); s.Attach(v, n) }()
		go func() { defer wg.Done(); s.Detach(n, v); s.Count() }()
	}
	wg.Wait()
	fmt.Println(s.Count())
}
