package roots

import (
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// propagate walks synchronous calls breadth first from every root, so each
// function records, per root, the shortest chain that reaches it. Inference
// stops at functions that are roots themselves: their context is declared
// (or unknown) and calls into them are checked at the call site.
func (b *builder) propagate() {
	b.c.reach = b.c.Propagate(b.c.Roots, func(fn *ssa.Function) bool { return b.c.rootOf[fn] != nil })
}

// Propagate walks synchronous calls breadth first from each of roots (in
// order) and returns, per function, one Reach per root that gets to it: the
// shortest chain. The walk does not enter a function for which stop is
// true (other than the root's own function): engines use it to stop at
// functions whose calls they check at the call site instead.
func (c *Contexts) Propagate(roots []*Root, stop func(*ssa.Function) bool) map[*ssa.Function][]Reach {
	type item struct {
		fn    *ssa.Function
		reach Reach
	}
	out := map[*ssa.Function][]Reach{}
	for _, r := range roots {
		if r.Func == nil {
			continue
		}
		start := Reach{Root: r, Chain: []*ssa.Function{r.Func}}
		out[r.Func] = append(out[r.Func], start)
		seen := map[*ssa.Function]bool{r.Func: true}
		queue := []item{{r.Func, start}}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, e := range c.calls[cur.fn] {
				if seen[e.Callee] || stop(e.Callee) {
					continue
				}
				seen[e.Callee] = true
				next := Reach{
					Root:  r,
					Chain: append(append([]*ssa.Function(nil), cur.reach.Chain...), e.Callee),
					Sites: append(append([]token.Pos(nil), cur.reach.Sites...), e.Site),
				}
				out[e.Callee] = append(out[e.Callee], next)
				queue = append(queue, item{e.Callee, next})
			}
		}
	}
	return out
}
