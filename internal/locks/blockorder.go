package locks

import (
	"slices"

	"golang.org/x/tools/go/ssa"
)

// topoOrder returns fn's blocks in reverse postorder of a depth-first
// walk from the entry (then from the recover block and any other block no
// walk reached), and whether the graph is acyclic. Without cycles that
// order is topological.
func topoOrder(fn *ssa.Function) ([]*ssa.BasicBlock, bool) {
	const (
		unseen = iota
		onStack
		finished
	)
	mark := make([]uint8, len(fn.Blocks))
	post := make([]*ssa.BasicBlock, 0, len(fn.Blocks))
	acyclic := true
	type frame struct {
		b    *ssa.BasicBlock
		next int
	}
	var stack []frame
	visit := func(root *ssa.BasicBlock) {
		if mark[root.Index] != unseen {
			return
		}
		mark[root.Index] = onStack
		stack = append(stack[:0], frame{b: root})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next < len(top.b.Succs) {
				succ := top.b.Succs[top.next]
				top.next++
				switch mark[succ.Index] {
				case unseen:
					mark[succ.Index] = onStack
					stack = append(stack, frame{b: succ})
				case onStack:
					acyclic = false
				}
				continue
			}
			mark[top.b.Index] = finished
			post = append(post, top.b)
			stack = stack[:len(stack)-1]
		}
	}
	visit(fn.Blocks[0])
	if fn.Recover != nil {
		visit(fn.Recover)
	}
	for _, b := range fn.Blocks {
		visit(b)
	}
	slices.Reverse(post)
	return post, acyclic
}
