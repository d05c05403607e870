package callbackonce

import (
	"sort"
	"sync"
)

// The standard library's iterations and sorts call the function they are
// given before they return, once per element: sync.Map's Range under a
// lock its function takes again deadlocks on the first entry, as a loop
// body would (vault's irrevocable lease count read-locking the core's
// state lock per lease under the request's read lock).
type Leases struct {
	mu     sync.RWMutex
	byID   sync.Map
	mounts map[string]string
}

func (l *Leases) mountOf(id string) string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mounts[id]
}

func (l *Leases) Count() map[string]int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := map[string]int{}
	l.byID.Range(func(k, _ any) bool { // want `RLock of Leases.mu by sync.Map.Range -> Leases.Count.func1 -> Leases.mountOf`
		out[l.mountOf(k.(string))]++
		return true
	})
	return out
}

// Sorted under the write lock with a comparison that takes it again.
func (l *Leases) Sorted(ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { // want `Leases.mu locked again by sort.Slice -> Leases.Sorted.func1 -> Leases.mountOf`
		return l.mountOf(ids[i]) < l.mountOf(ids[j])
	})
}

// The fix: the function reads what the holder already holds.
func (l *Leases) CountFixed() map[string]int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := map[string]int{}
	l.byID.Range(func(k, _ any) bool {
		out[l.mounts[k.(string)]]++
		return true
	})
	return out
}

func (l *Leases) Reset() {
	l.mu.Lock()
	l.mounts = map[string]string{}
	l.mu.Unlock()
}
