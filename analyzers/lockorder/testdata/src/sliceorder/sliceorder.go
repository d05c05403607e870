// Package sliceorder: the locks of several keys taken in the order of a
// slice the call is given or makes, held together. Two calls with the
// same keys in another order deadlock; sorting the keys first is the fix
// (ovn-kubernetes locking an EgressIP's node and the pod's node in the
// order of the event).
package sliceorder

import (
	"slices"
	"sort"
	"sync"
)

type keyLock struct {
	sync.Mutex
	refs int
}

// KeyMap hands out one lock per key.
type KeyMap struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

func (m *KeyMap) LockKey(key string) {
	m.mu.Lock()
	l, ok := m.locks[key]
	if !ok {
		l = &keyLock{}
		m.locks[key] = l
	}
	l.refs++
	m.mu.Unlock()
	l.Lock()
}

func (m *KeyMap) UnlockKey(key string) {
	m.mu.Lock()
	l := m.locks[key]
	l.refs--
	if l.refs == 0 {
		delete(m.locks, key)
	}
	m.mu.Unlock()
	l.Unlock()
}

type Controller struct {
	nodes *KeyMap
	byKey map[string]*sync.RWMutex
	order []string
}

func nodesOf(egress, pod string) []string {
	if egress == pod {
		return []string{egress}
	}
	return []string{egress, pod}
}

func (c *Controller) Assign(egress, pod string) {
	for _, n := range nodesOf(egress, pod) {
		c.nodes.LockKey(n) // want `lock order by slice order: Controller.Assign takes the keyLock.Mutex of each of the keys in what nodesOf returns and holds them all`
		defer c.nodes.UnlockKey(n)
	}
}

func (c *Controller) Update(keys []string) {
	for _, k := range keys {
		c.byKey[k].Lock() // want `lock order by slice order: Controller.Update takes the Controller.byKey\[\] of each of the keys in keys`
		defer c.byKey[k].Unlock()
	}
}

// Sorted first: one order for every caller.
func (c *Controller) AssignSorted(egress, pod string) {
	nodes := nodesOf(egress, pod)
	sort.Strings(nodes)
	for _, n := range nodes {
		c.nodes.LockKey(n)
		defer c.nodes.UnlockKey(n)
	}
}

func sortedNodes(egress, pod string) []string {
	nodes := nodesOf(egress, pod)
	slices.Sort(nodes)
	return nodes
}

// Sorted by the function that makes the slice.
func (c *Controller) AssignFromSorted(egress, pod string) {
	for _, n := range sortedNodes(egress, pod) {
		c.nodes.LockKey(n)
		defer c.nodes.UnlockKey(n)
	}
}

// A field's slice has one order for everyone.
func (c *Controller) LockOrdered() {
	for _, k := range c.order {
		c.byKey[k].Lock()
		defer c.byKey[k].Unlock()
	}
}

// One key at a time: released in the iteration.
func (c *Controller) Touch(keys []string) {
	for _, k := range keys {
		c.nodes.LockKey(k)
		c.nodes.UnlockKey(k)
	}
}

// Read locks only.
func (c *Controller) Read(keys []string) {
	for _, k := range keys {
		c.byKey[k].RLock()
		defer c.byKey[k].RUnlock()
	}
}
