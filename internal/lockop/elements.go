package lockop

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Per-key locks: a lock kept as an element of a map, slice or array field
// (l.m[k] for m map[string]*sync.Mutex, g.cells[i] for cells
// [16]sync.Mutex) has no declaring field of its own. Its class is the
// container's, marked as an element: "pkg.KeyLocks.m[]". Locks of two
// keys are two locks of one class: they order against other classes but
// are never the same lock by class alone.

// ElementOf returns the field or package var holding the container whose
// element the lock value v is, nil when v is not one. A lock made on a
// miss and stored into the container (m, ok := l.m[k]; if !ok { m =
// new(sync.Mutex); l.m[k] = m }) counts: the phi of the element and
// fresh allocations.
func ElementOf(v ssa.Value) *types.Var { return elementOf(v, false) }

// Keyed reports whether the lock value v lies in an element of a
// container with a class (ElementOf, or a field of one: l.m[k].mu): one
// key's lock among several.
func Keyed(v ssa.Value) bool { return elementOf(v, true) != nil }

// ElemKey and ElemName are ClassKey and ShortName of an element class.
func ElemKey(container *types.Var) string  { return ClassKey(container) + "[]" }
func ElemName(container *types.Var) string { return ShortName(container) + "[]" }

func elementOf(v ssa.Value, throughFields bool) *types.Var {
	for range 16 { // bounded: SSA value chains here are short
		switch x := v.(type) {
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return nil
			}
			if _, isElem := x.X.(*ssa.IndexAddr); !isElem && !throughFields {
				return nil // a pointer loaded from a field: that field's lock
			}
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		case *ssa.MakeInterface:
			v = x.X
		case *ssa.FieldAddr:
			if !throughFields {
				return nil
			}
			v = x.X
		case *ssa.Extract:
			l, ok := x.Tuple.(*ssa.Lookup)
			if !ok || x.Index != 0 {
				return nil
			}
			v = l
		case *ssa.IndexAddr:
			return ClassOf(x.X)
		case *ssa.Index:
			return ClassOf(x.X)
		case *ssa.Lookup:
			return ClassOf(x.X)
		case *ssa.Phi:
			return phiElement(x, throughFields)
		default:
			return nil
		}
	}
	return nil
}

// phiElement is the container of a phi whose edges are elements of one
// container or fresh allocations (made on a miss).
func phiElement(phi *ssa.Phi, throughFields bool) *types.Var {
	var c *types.Var
	for _, e := range phi.Edges {
		if e == phi {
			continue
		}
		if _, fresh := e.(*ssa.Alloc); fresh {
			continue
		}
		ec := elementOf(e, throughFields)
		if ec == nil || c != nil && ec != c {
			return nil
		}
		c = ec
	}
	return c
}
