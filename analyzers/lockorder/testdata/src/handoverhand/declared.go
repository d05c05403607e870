package handoverhand

import "sync"

// A lock the caller holds, reached through the value a loop variable
// starts from, stays held under its own name while the loop walks on:
// the loop variable is only a second name for the first turn.
type owner struct {
	mu sync.Mutex
}

type namespace struct {
	owner  *owner
	parent *namespace
	ids    map[*group]int // +checklocks:owner.mu
}

type group struct {
	ns *namespace
}

// register walks the namespace and its ancestors. Silent.
//
// +checklocks:g.ns.owner.mu
func (g *group) register(id int) int {
	n := 0
	for ns := g.ns; ns != nil; ns = ns.parent {
		n++
	}
	g.ns.ids[g] = id
	return n
}
