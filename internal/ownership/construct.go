package ownership

import (
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// exempt reports whether an access through x at instruction at is not a
// use of shared state: x derives from a value received from a channel
// (rule 4: the receiver owns it), or from an object allocated in fn that
// has not yet been published on any path to at (rule 3: construction).
//
// Publication is approximated: a go statement, a send, or a store into
// memory other than a local variable of anything derived from the
// allocation (itself, a closure capturing it, a conversion of it), or a
// call handing a closure over it to an asynchronous API. Ordinary calls
// that receive it do not publish: constructors commonly call helpers on
// the new object before starting its goroutine.
func (e *engine) exempt(fn *ssa.Function, x ssa.Value, at ssa.Instruction) bool {
	switch b := base(x).(type) {
	case *ssa.UnOp:
		return b.Op == token.ARROW
	case *ssa.Select:
		return true
	case *ssa.Alloc:
		if b.Parent() != fn {
			return false
		}
		for _, pub := range e.publications(b) {
			if reaches(pub, at) {
				return false
			}
		}
		return true
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

// publications returns the instructions that hand alloc to other code.
func (e *engine) publications(alloc *ssa.Alloc) []ssa.Instruction {
	if pubs, ok := e.pubs[alloc]; ok {
		return pubs
	}
	derived := map[ssa.Value]bool{alloc: true}
	work := []ssa.Value{alloc}
	var pubs []ssa.Instruction
	for len(work) > 0 {
		v := work[0]
		work = work[1:]
		refs := v.Referrers()
		if refs == nil {
			continue
		}
		for _, r := range *refs {
			switch u := r.(type) {
			case *ssa.MakeClosure, *ssa.ChangeType, *ssa.MakeInterface:
				w := u.(ssa.Value)
				if !derived[w] {
					derived[w] = true
					work = append(work, w)
				}
			case *ssa.Store:
				if u.Val != v {
					continue
				}
				if cell, ok := u.Addr.(*ssa.Alloc); ok {
					if !derived[cell] {
						derived[cell] = true
						work = append(work, cell)
					}
					continue
				}
				pubs = append(pubs, u)
			case *ssa.Go, *ssa.Send, *ssa.MapUpdate:
				pubs = append(pubs, r)
			case ssa.CallInstruction:
				if mc, ok := v.(*ssa.MakeClosure); ok && e.asyncClosure(mc) {
					pubs = append(pubs, r)
				}
			}
		}
	}
	e.pubs[alloc] = pubs
	return pubs
}

// asyncClosure reports whether the closure's body is a goroutine root
// other than an entry (a go target or an asynchronous API argument).
func (e *engine) asyncClosure(mc *ssa.MakeClosure) bool {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return false
	}
	r := e.ctx.RootOf(fn)
	return r != nil && r.Foreign()
}

// reaches reports whether control can flow from instruction from to
// instruction to (to after from in one block, or to's block reachable).
func reaches(from, to ssa.Instruction) bool {
	fb, tb := from.Block(), to.Block()
	if fb == nil || tb == nil {
		return true
	}
	if fb == tb && index(fb, from) < index(tb, to) {
		return true
	}
	seen := map[*ssa.BasicBlock]bool{}
	work := append([]*ssa.BasicBlock(nil), fb.Succs...)
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if b == tb {
			return true
		}
		if !seen[b] {
			seen[b] = true
			work = append(work, b.Succs...)
		}
	}
	return false
}

func index(b *ssa.BasicBlock, instr ssa.Instruction) int {
	for i, x := range b.Instrs {
		if x == instr {
			return i
		}
	}
	return -1
}
