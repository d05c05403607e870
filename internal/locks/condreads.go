package locks

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// What decides a take on the way down a call chain: the fields and
// package vars read by the conditions of the ifs of each function on the
// way but the last (which takes the lock on every path: take.leafSure),
// and everything a function called in such a condition reads. A caller
// that sets a constant into one of them under the lock may be ruling out
// the branch that re-locks (writesShared).

// condReads reports whether a condition of the functions of via but its
// last may test obj, a field or package var; true when one of them is not
// the package's.
func (e *engine) condReads(via *callChain, obj types.Object) bool {
	if obj == nil {
		return true
	}
	names := via.names()
	for _, name := range names[:max(len(names)-1, 0)] {
		fn := e.funcNamed(name)
		if fn == nil {
			return true
		}
		if e.condReadCache == nil {
			e.condReadCache = map[*ssa.Function]map[types.Object]bool{}
		}
		reads, ok := e.condReadCache[fn]
		if !ok {
			reads = map[types.Object]bool{}
			visited := map[ssa.Value]bool{}
			for _, b := range fn.Blocks {
				if ifi, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If); ok {
					e.valueReads(ifi.Cond, reads, visited)
				}
			}
			e.condReadCache[fn] = reads
		}
		if reads[obj] {
			return true
		}
	}
	return false
}

// valueReads adds the fields and package vars v is computed from, within
// its function, and all those a package function it calls reads.
func (e *engine) valueReads(v ssa.Value, reads map[types.Object]bool, visited map[ssa.Value]bool) {
	if v == nil || visited[v] {
		return
	}
	visited[v] = true
	switch u := v.(type) {
	case *ssa.UnOp:
		addLoaded(u, reads)
		e.valueReads(u.X, reads, visited)
	case *ssa.FieldAddr:
		e.valueReads(u.X, reads, visited)
	case *ssa.Field:
		if st, ok := u.X.Type().Underlying().(*types.Struct); ok && u.Field < st.NumFields() {
			reads[st.Field(u.Field)] = true
		}
		e.valueReads(u.X, reads, visited)
	case *ssa.BinOp:
		e.valueReads(u.X, reads, visited)
		e.valueReads(u.Y, reads, visited)
	case *ssa.Phi:
		for _, x := range u.Edges {
			e.valueReads(x, reads, visited)
		}
	case *ssa.ChangeType:
		e.valueReads(u.X, reads, visited)
	case *ssa.Convert:
		e.valueReads(u.X, reads, visited)
	case *ssa.Extract:
		e.valueReads(u.Tuple, reads, visited)
	case *ssa.Lookup:
		e.valueReads(u.X, reads, visited)
	case *ssa.Call:
		for _, a := range u.Call.Args {
			e.valueReads(a, reads, visited)
		}
		if callee := u.Call.StaticCallee(); callee != nil && e.p.FuncSet[e.canonical(callee)] {
			allReads(e.canonical(callee), reads)
		}
	}
}

// allReads adds every field and package var fn reads.
func allReads(fn *ssa.Function, reads map[types.Object]bool) {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if u, ok := instr.(*ssa.UnOp); ok {
				addLoaded(u, reads)
			}
		}
	}
}

// addLoaded adds the field or package var u loads, if it is such a load.
func addLoaded(u *ssa.UnOp, reads map[types.Object]bool) {
	if u.Op != token.MUL {
		return
	}
	switch a := u.X.(type) {
	case *ssa.FieldAddr:
		if f := lockop.FieldOf(a); f != nil {
			reads[f] = true
		}
	case *ssa.Global:
		reads[a.Object()] = true
	}
}
