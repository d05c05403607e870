package ownership

import (
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// exempt reports whether an access through x at instruction at is not a
// use of shared state: x derives from a value received from a channel
// (rule 4: the receiver owns it), or from an object allocated in fn that
// is still private at at (rule 3: construction; see roots.Contexts.Private).
func (e *engine) exempt(fn *ssa.Function, x ssa.Value, at ssa.Instruction) bool {
	switch b := base(x).(type) {
	case *ssa.UnOp:
		return b.Op == token.ARROW
	case *ssa.Select:
		return true
	case *ssa.Alloc:
		return b.Parent() == fn && e.ctx.Private(b, at)
	}
	return false
}

// base strips selections, indexing and conversions to the value an access
// is rooted at; a load from a local variable cell that holds a single
// value (a captured constructor variable) continues to that value.
func base(v ssa.Value) ssa.Value {
	for range 32 {
		switch x := v.(type) {
		case *ssa.FieldAddr:
			v = x.X
		case *ssa.Field:
			v = x.X
		case *ssa.IndexAddr:
			v = x.X
		case *ssa.Index:
			v = x.X
		case *ssa.Extract:
			v = x.Tuple
		case *ssa.ChangeType:
			v = x.X
		case *ssa.TypeAssert:
			v = x.X
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return x
			}
			cell, ok := x.X.(*ssa.Alloc)
			if !ok {
				return x
			}
			stored := singleStore(cell)
			if stored == nil {
				return x
			}
			v = stored
		default:
			return v
		}
	}
	return v
}

// singleStore returns the one value ever stored into cell, if it holds a
// pointer stored once (a local variable captured by a closure).
func singleStore(cell *ssa.Alloc) ssa.Value {
	var val ssa.Value
	for _, r := range *cell.Referrers() {
		if st, ok := r.(*ssa.Store); ok && st.Addr == cell {
			if val != nil {
				return nil
			}
			val = st.Val
		}
	}
	return val
}
