package objects

import (
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// ContainerOf returns the container v is read from as one element: the
// slice, array or map of `x[i]`, `x[k]`, `v, ok := x[k]` and of a range
// over x's values; nil when v is no element read.
func ContainerOf(v ssa.Value) ssa.Value {
	switch u := v.(type) {
	case *ssa.UnOp:
		if a, ok := u.X.(*ssa.IndexAddr); ok && u.Op == token.MUL {
			return a.X
		}
	case *ssa.Lookup:
		return u.X
	case *ssa.Index:
		return u.X
	case *ssa.Extract:
		switch t := u.Tuple.(type) {
		case *ssa.Lookup:
			if u.Index == 0 {
				return t.X
			}
		case *ssa.Next:
			if rg, ok := t.Iter.(*ssa.Range); ok && u.Index == 2 {
				return rg.X
			}
		}
	}
	return nil
}
