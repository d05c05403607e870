package locks

import (
	"go/constant"
	"go/token"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Once guards. A function that runs its work once per object tests a
// flag and returns early when the flag says the work is done, then sets
// the flag itself: `if t.closed { return }; t.closed = true; ...` (or a
// compare-and-swap, or `if t.state == closing { return }` with `t.state =
// closing` below). The early return is what every later call takes; the
// first call runs the rest. For whether a take happens on every path
// (condStep), the "already done" edge is not a path: a Close that calls
// back into its owner's lock does so on its first call, which is the
// one the owner makes (grpc's transport calling the addrConn's onClose
// under the addrConn's lock). A flag the function does not set itself
// (a configuration bit such as crypto/tls's renegotiation setting) is
// an ordinary branch.

// onceSkips returns the "already done" edges of fn's once guards, by
// predecessor and successor index (nil when there is none).
func (e *engine) onceSkips(fn *ssa.Function) map[[2]int]bool {
	if skips, ok := e.onceGuards[fn]; ok {
		return skips
	}
	skips := findOnceSkips(fn)
	if e.onceGuards == nil {
		e.onceGuards = map[*ssa.Function]map[[2]int]bool{}
	}
	e.onceGuards[fn] = skips
	return skips
}

// flagStore is a store into a flag: a field or a package var, named by
// its path (so two loads of one receiver, captured or not, are one flag).
type flagStore struct {
	ref string
	val constant.Value // nil: not a constant
	blk *ssa.BasicBlock
}

func findOnceSkips(fn *ssa.Function) map[[2]int]bool {
	var stores []flagStore
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			st, ok := instr.(*ssa.Store)
			if !ok {
				continue
			}
			ref, ok := flagOf(fn, st.Addr)
			if !ok {
				continue
			}
			var val constant.Value
			if c, ok := st.Val.(*ssa.Const); ok {
				val = c.Value
			}
			stores = append(stores, flagStore{ref, val, b})
		}
	}
	return branchEdges(fn, func(p *ssa.BasicBlock, cond ssa.Value) (int, bool) {
		return skipSucc(fn, cond, stores, p)
	})
}

// branchEdges returns the edges (block, successor index) that succ picks
// out of fn's two-way branches, given each branch's block and condition;
// nil when there is none.
func branchEdges(fn *ssa.Function, succ func(b *ssa.BasicBlock, cond ssa.Value) (int, bool)) map[[2]int]bool {
	var out map[[2]int]bool
	for _, b := range fn.Blocks {
		if len(b.Instrs) == 0 || len(b.Succs) != 2 {
			continue
		}
		iff, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If)
		if !ok {
			continue
		}
		i, ok := succ(b, iff.Cond)
		if !ok {
			continue
		}
		if out == nil {
			out = map[[2]int]bool{}
		}
		out[[2]int{b.Index, b.Succs[i].Index}] = true
	}
	return out
}

// skipSucc returns the index of the successor of p (whose If tests cond)
// that a later call takes once this one has set the flag cond reads.
func skipSucc(fn *ssa.Function, cond ssa.Value, stores []flagStore, p *ssa.BasicBlock) (int, bool) {
	cond, negated := stripNot(cond)
	flip := func(i int) int {
		if negated {
			return 1 - i
		}
		return i
	}
	if isCompareAndSwap(cond) {
		return flip(1), true // the swap failed: another call did it
	}
	// "flag == c" holds on successor whenTrue of the test.
	var ref string
	var c constant.Value
	whenEq := 0
	switch x := cond.(type) {
	case *ssa.UnOp:
		r, ok := loadedFlag(fn, x)
		if !ok {
			return 0, false
		}
		ref, c = r, constant.MakeBool(true)
	case *ssa.BinOp:
		if x.Op != token.EQL && x.Op != token.NEQ {
			return 0, false
		}
		l, k := x.X, x.Y
		if _, ok := l.(*ssa.Const); ok {
			l, k = k, l
		}
		kc, ok := k.(*ssa.Const)
		if !ok || kc.Value == nil {
			return 0, false
		}
		u, ok := l.(*ssa.UnOp)
		if !ok {
			return 0, false
		}
		r, ok := loadedFlag(fn, u)
		if !ok {
			return 0, false
		}
		ref, c = r, kc.Value
		if x.Op == token.NEQ {
			whenEq = 1
		}
	default:
		return 0, false
	}
	// Setting the flag to c marks done (skip where flag == c); setting it
	// to the other boolean marks done where the flag is not c.
	for _, want := range []struct {
		val  constant.Value
		succ int
	}{{c, whenEq}, {notBool(c), 1 - whenEq}} {
		if want.val == nil {
			continue
		}
		skip := flip(want.succ)
		if setsOnlyOnDoPath(stores, ref, want.val, p.Succs[skip], p.Succs[1-skip]) {
			return skip, true
		}
	}
	return 0, false
}

// setsOnlyOnDoPath reports whether the flag is set to val on the "do"
// successor's side and written nowhere on the skip side.
func setsOnlyOnDoPath(stores []flagStore, ref string, val constant.Value, skip, do *ssa.BasicBlock) bool {
	if skip == do || len(do.Preds) != 1 {
		return false
	}
	set := false
	for _, st := range stores {
		if st.ref != ref {
			continue
		}
		if skip.Dominates(st.blk) {
			return false
		}
		if st.val != nil && do.Dominates(st.blk) && constant.Compare(st.val, token.EQL, val) {
			set = true
		}
	}
	return set
}

func notBool(c constant.Value) constant.Value {
	if c.Kind() != constant.Bool {
		return nil
	}
	return constant.MakeBool(!constant.BoolVal(c))
}

// loadedFlag returns the flag a load reads.
func loadedFlag(fn *ssa.Function, u *ssa.UnOp) (string, bool) {
	if u.Op != token.MUL {
		return "", false
	}
	return flagOf(fn, u.X)
}

// flagOf names the flag at addr, a field or a package var, by its path.
func flagOf(fn *ssa.Function, addr ssa.Value) (string, bool) {
	switch addr.(type) {
	case *ssa.Global, *ssa.FieldAddr:
		return pathOf(fn, addr), true
	}
	return "", false
}

// isCompareAndSwap reports whether v is a compare-and-swap of sync/atomic
// (the function or a method of its typed values).
func isCompareAndSwap(v ssa.Value) bool {
	call, ok := v.(*ssa.Call)
	if !ok {
		return false
	}
	callee := call.Call.StaticCallee()
	if callee == nil || callee.Object() == nil || callee.Object().Pkg() == nil {
		return false
	}
	return callee.Object().Pkg().Path() == "sync/atomic" && strings.HasPrefix(callee.Name(), "CompareAndSwap")
}
