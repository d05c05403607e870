package roots

import (
	"golang.org/x/tools/go/ssa"
)

// propagate walks synchronous calls breadth first from every root, so each
// function records, per root, the shortest chain that reaches it. Inference
// stops at functions that are roots themselves: their context is declared
// (or unknown) and calls into them are checked at the call site.
func (c *Contexts) propagate() {
	c.reach = c.Propagate(c.Roots, func(fn *ssa.Function) bool { return c.rootOf[fn] != nil })
}

// Propagate walks synchronous calls breadth first from each of roots (in
// order) and returns, per function, one Reach per root that gets to it: the
// shortest chain. The walk does not enter a function for which stop is
// true (other than the root's own function): engines use it to stop at
// functions whose calls they check at the call site instead.
func (c *Contexts) Propagate(roots []*Root, stop func(*ssa.Function) bool) map[*ssa.Function][]Reach {
	out := map[*ssa.Function][]Reach{}
	seen := map[*ssa.Function]bool{}
	var queue []*link
	for _, r := range roots {
		if r.Func == nil {
			continue
		}
		start := &link{fn: r.Func}
		out[r.Func] = append(out[r.Func], Reach{Root: r, last: start})
		clear(seen)
		seen[r.Func] = true
		queue = append(queue[:0], start)
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, e := range c.calls[cur.fn] {
				if seen[e.Callee] || stop(e.Callee) {
					continue
				}
				seen[e.Callee] = true
				next := &link{fn: e.Callee, site: e.Site, parent: cur, depth: cur.depth + 1}
				out[e.Callee] = append(out[e.Callee], Reach{Root: r, last: next})
				queue = append(queue, next)
			}
		}
	}
	return out
}
