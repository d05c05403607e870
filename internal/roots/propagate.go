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
	type item struct {
		fn    *ssa.Function
		reach Reach
	}
	for _, r := range b.c.Roots {
		if r.Func == nil || !b.p.FuncSet[r.Func] {
			continue
		}
		start := Reach{Root: r, Chain: []*ssa.Function{r.Func}}
		b.c.reach[r.Func] = append(b.c.reach[r.Func], start)
		seen := map[*ssa.Function]bool{r.Func: true}
		queue := []item{{r.Func, start}}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, e := range b.c.calls[cur.fn] {
				if seen[e.Callee] || b.c.rootOf[e.Callee] != nil {
					continue
				}
				seen[e.Callee] = true
				next := Reach{
					Root:  r,
					Chain: append(append([]*ssa.Function(nil), cur.reach.Chain...), e.Callee),
					Sites: append(append([]token.Pos(nil), cur.reach.Sites...), e.Site),
				}
				b.c.reach[e.Callee] = append(b.c.reach[e.Callee], next)
				queue = append(queue, item{e.Callee, next})
			}
		}
	}
}
