package lockop

import (
	"go/token"
	"go/types"
	"slices"

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
// fresh allocations; so does one an accessor returns (l.get(k)).
func ElementOf(v ssa.Value) *types.Var { return elementOf(v, false, 0).container }

// ElementHolder is the value whose object holds v's container
// (&s.leaseLocks for s.leaseLocks.m[k] or s.leaseLocks.get(k)), nil when
// unknown: two containers of one class under different value fields are
// different locks.
func ElementHolder(v ssa.Value) ssa.Value { return elementOf(v, false, 0).holder }

// Keyed reports whether the lock value v lies in an element of a
// container with a class (ElementOf, or a field of one: l.m[k].mu): one
// key's lock among several.
func Keyed(v ssa.Value) bool { return elementOf(v, true, 0).container != nil }

// ElemKey and ElemName are ClassKey and ShortName of an element class.
func ElemKey(container *types.Var) string  { return ClassKey(container) + "[]" }
func ElemName(container *types.Var) string { return ShortName(container) + "[]" }

// maxElemCalls bounds the accessor calls followed (returnedElement).
const maxElemCalls = 1

// element is a container and the value holding it.
type element struct {
	container *types.Var
	holder    ssa.Value
}

// join merges the elements of several edges or returns: one container,
// and the holder when they all agree.
func (a element) join(b element, first bool) (element, bool) {
	if b.container == nil || !first && b.container != a.container {
		return element{}, false
	}
	if first {
		return b, true
	}
	if a.holder != b.holder {
		a.holder = nil
	}
	return a, true
}

func containerElement(x ssa.Value) element {
	e := element{container: ClassOf(x)}
	if u, ok := x.(*ssa.UnOp); ok && u.Op == token.MUL {
		x = u.X
	}
	if fa, ok := x.(*ssa.FieldAddr); ok && e.container != nil {
		e.holder = fa.X
	}
	return e
}

func elementOf(v ssa.Value, throughFields bool, calls int) element {
	for range 16 { // bounded: SSA value chains here are short
		switch x := v.(type) {
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return element{}
			}
			if slot, ok := x.X.(*ssa.Alloc); ok && !slot.Heap {
				return storedElement(slot, throughFields, calls)
			}
			if _, isElem := x.X.(*ssa.IndexAddr); !isElem && !throughFields {
				return element{} // a pointer loaded from a field: that field's lock
			}
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		case *ssa.MakeInterface:
			v = x.X
		case *ssa.FieldAddr:
			if !throughFields {
				return element{}
			}
			v = x.X
		case *ssa.Extract:
			if call, ok := x.Tuple.(*ssa.Call); ok {
				return returnedElement(call, x.Index, throughFields, calls) // l, err := get(key)
			}
			l, ok := x.Tuple.(*ssa.Lookup)
			if !ok || x.Index != 0 {
				return element{}
			}
			v = l
		case *ssa.IndexAddr:
			return containerElement(x.X)
		case *ssa.Index:
			return containerElement(x.X)
		case *ssa.Lookup:
			return containerElement(x.X)
		case *ssa.Phi:
			return phiElement(x, throughFields, calls)
		case *ssa.Call:
			if x.Call.Signature().Results().Len() != 1 {
				return element{}
			}
			return returnedElement(x, 0, throughFields, calls)
		default:
			return element{}
		}
	}
	return element{}
}

// phiElement is the container of a phi whose edges are elements of one
// container or fresh allocations (made on a miss).
func phiElement(phi *ssa.Phi, throughFields bool, calls int) element {
	var c element
	first := true
	for _, e := range phi.Edges {
		if e == phi {
			continue
		}
		if _, fresh := e.(*ssa.Alloc); fresh {
			continue
		}
		var ok bool
		if c, ok = c.join(elementOf(e, throughFields, calls), first); !ok {
			return element{}
		}
		first = false
	}
	return c
}

// storedElement is the container of the locks stored into a local slot
// (the result slot of a function with defers): every store agrees.
func storedElement(slot *ssa.Alloc, throughFields bool, calls int) element {
	var c element
	if slot.Referrers() == nil {
		return c
	}
	first := true
	for _, r := range *slot.Referrers() {
		st, ok := r.(*ssa.Store)
		if !ok || st.Addr != slot {
			continue
		}
		if k, isConst := st.Val.(*ssa.Const); isConst && k.IsNil() {
			continue // a failure's nil (`return nil, err` under a defer)
		}
		if c, ok = c.join(elementOf(st.Val, throughFields, calls), first); !ok {
			return element{}
		}
		first = false
	}
	return c
}

// returnedElement is the container of the lock an accessor returns as
// its result index (`func (k *KeyLocks) get(key string) *sync.Mutex`,
// looking the key's lock up and making it on a miss): every return of the
// static callee returns an element of that one container, or nil. A
// container the callee reaches through a parameter is held by the call's
// argument.
func returnedElement(call *ssa.Call, index int, throughFields bool, calls int) element {
	rets, ok := returnedResults(call, index)
	if !ok || calls >= maxElemCalls {
		return element{}
	}
	var c element
	first := true
	for _, r := range rets {
		if k, isConst := r.(*ssa.Const); isConst && k.IsNil() {
			continue // a failure's nil holds no lock (`return nil, err`)
		}
		if c, ok = c.join(elementOf(r, throughFields, calls+1), first); !ok {
			return element{}
		}
		first = false
	}
	if p, ok := c.holder.(*ssa.Parameter); ok {
		c.holder = nil
		if i := slices.Index(call.Call.StaticCallee().Params, p); i >= 0 && i < len(call.Call.Args) {
			c.holder = call.Call.Args[i]
		}
	} else {
		c.holder = nil // the callee's own object: not the caller's to name
	}
	return c
}
