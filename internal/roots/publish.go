package roots

import "golang.org/x/tools/go/ssa"

// Private reports whether alloc, allocated in the function that contains
// at, is still private there: no instruction that hands it to other code
// can have run before at. Accesses to a private object are construction,
// not shared-state accesses (the contract's construction rule, for owned and
// guarded state alike).
//
// Publication is approximated: a go statement, a send, a map insert, or a
// store into memory other than a local variable of anything derived from
// the allocation (itself, a closure capturing it, a conversion of it), or a
// call handing a closure over it to an asynchronous API. Ordinary calls
// that receive it do not publish: constructors commonly call helpers on the
// new object before starting its goroutine. c may be nil (no roots known).
func (c *Contexts) Private(alloc *ssa.Alloc, at ssa.Instruction) bool {
	for _, pub := range c.publications(alloc) {
		if reaches(pub, at) {
			return false
		}
	}
	return true
}

// publications returns the instructions that hand alloc to other code.
func (c *Contexts) publications(alloc *ssa.Alloc) []ssa.Instruction {
	if c != nil {
		if pubs, ok := c.pubs[alloc]; ok {
			return pubs
		}
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
				if mc, ok := v.(*ssa.MakeClosure); ok && c.asyncClosure(mc) {
					pubs = append(pubs, r)
				}
			}
		}
	}
	if c != nil {
		c.pubs[alloc] = pubs
	}
	return pubs
}

// asyncClosure reports whether the closure's body is a goroutine root
// other than an entry (a go target or an asynchronous API argument).
func (c *Contexts) asyncClosure(mc *ssa.MakeClosure) bool {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok || c == nil {
		return false
	}
	r := c.RootOf(fn)
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
