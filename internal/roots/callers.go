package roots

import "golang.org/x/tools/go/ssa"

// RootsReaching returns the roots whose synchronous calls reach fn: the
// roots of Of(fn)'s reaches, found by walking fn's callers back to the
// roots instead of propagating every root of the package forward. The lock
// engine asks it of the few functions that hold a lock across a blocking
// operation; on a large unannotated package the forward propagation (a
// Reach per root and function, kept for the rest of the run) was the
// largest thing the tool kept in memory (bench/RESULTS.md).
func (c *Contexts) RootsReaching(fn *ssa.Function) map[*Root]bool {
	c.callersOnce.Do(c.invert)
	out := map[*Root]bool{}
	seen := map[*ssa.Function]bool{fn: true}
	queue := []*ssa.Function{fn}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		// As in Propagate, no walk enters a function that is a root
		// itself: a root is reached only from its own start.
		if c.rootOf[cur] != nil {
			for _, r := range c.rootsAt[cur] {
				out[r] = true
			}
			continue
		}
		for _, caller := range c.callers[cur] {
			if !seen[caller] {
				seen[caller] = true
				queue = append(queue, caller)
			}
		}
	}
	return out
}

// invert builds the callers of each function and the roots starting at
// each function.
func (c *Contexts) invert() {
	c.callers = map[*ssa.Function][]*ssa.Function{}
	for caller, edges := range c.calls {
		for _, e := range edges {
			c.callers[e.Callee] = append(c.callers[e.Callee], caller)
		}
	}
	c.rootsAt = map[*ssa.Function][]*Root{}
	for _, r := range c.Roots {
		if r.Func != nil {
			c.rootsAt[r.Func] = append(c.rootsAt[r.Func], r)
		}
	}
}
