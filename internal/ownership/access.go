package ownership

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// kind is how code touches confined state.
type kind uint8

const (
	read kind = iota
	write
	call // a call of a function confined to a role
)

func (k kind) verb() string {
	switch k {
	case write:
		return "written"
	case call:
		return "called"
	}
	return "read"
}

// access is one touch of role-confined state, seen from the function that
// contains it. For a call of a summarised function (an undeclared exported
// function, here or in another package) via holds the rest of the chain.
type access struct {
	role  string
	kind  kind
	pos   token.Pos
	state string   // as the message shows it: "c.inflight", "Consumer.commit"
	key   string   // as facts name it: "Consumer.inflight", "pkg.offsets"
	via   []string // functions between this one and the state, if any
	// last, when set, ends the chain instead of state: what a function
	// handed a derived reference does with it ("p.offsets").
	last string
	// from is the owned state a derived access goes through (rule 6).
	from *source
	// checked marks a call of a role function that asserts its owner at
	// runtime: rule 2 does not ask its callers to declare a role, since
	// the assertion covers callers the analysis cannot see.
	checked bool
}

// collect returns the accesses fn makes itself, in instruction order:
// owned fields and package vars, and calls of role functions. Accesses that
// are construction (rule 3) or on a value received from a channel (rule 4)
// are left out.
func (e *engine) collect(fn *ssa.Function) []access {
	var out []access
	for _, blk := range fn.Blocks {
		for _, instr := range blk.Instrs {
			switch in := instr.(type) {
			case *ssa.FieldAddr:
				if a, ok := e.fieldAccess(fn, in, in.X, in.Field, addrKind(in, 0)); ok {
					out = append(out, a)
				}
			case *ssa.Field:
				if a, ok := e.fieldAccess(fn, in, in.X, in.Field, read); ok {
					out = append(out, a)
				}
			case *ssa.Go:
				e.checkGoCall(fn, in)
			case ssa.CallInstruction:
				out = append(out, e.callAccesses(fn, in)...)
			}
			out = append(out, e.globalAccesses(fn, instr)...)
		}
	}
	return append(out, e.localAccesses(fn)...)
}

// fieldAccess reports whether selecting field index of x is an access of
// owned state.
func (e *engine) fieldAccess(fn *ssa.Function, at ssa.Instruction, x ssa.Value, index int, k kind) (access, bool) {
	s, ok := e.ownedField(fn, at, x, index)
	if !ok {
		return access{}, false
	}
	return access{role: s.role, kind: k, pos: at.Pos(), state: s.state, key: s.key}, true
}

// Writes reports whether the uses of an address (a field's or element's)
// write through it, by the rule confined applies to owned state: a store,
// an element of the map or slice it holds updated, or the address passed
// to a call.
func Writes(addr ssa.Value) bool { return addrKind(addr, 0) == write }

// ElementsWritten reports whether the map or slice loaded into v (a load
// of a field or var) has an element updated, deleted or cleared.
func ElementsWritten(v ssa.Value) bool { return elementsWritten(v, 0) }

// addrKind classifies the uses of an address of owned state: stored to
// (or an element of the map or slice it holds updated, or its address
// passed to a call: pointer methods, sync/atomic) is a write, else a read.
func addrKind(addr ssa.Value, depth int) kind {
	refs := addr.Referrers()
	if refs == nil || depth > 8 {
		return read
	}
	for _, r := range *refs {
		switch u := r.(type) {
		case *ssa.Store:
			if u.Addr == addr {
				return write
			}
		case *ssa.UnOp:
			if u.Op == token.MUL && elementsWritten(u, depth) {
				return write
			}
		case *ssa.FieldAddr:
			if addrKind(u, depth+1) == write {
				return write
			}
		case *ssa.IndexAddr:
			if addrKind(u, depth+1) == write {
				return write
			}
		case ssa.CallInstruction:
			return write
		}
	}
	return read
}

// elementsWritten reports whether the map or slice loaded into v has an
// element updated: c.offsets[p] = x writes c.offsets.
func elementsWritten(v ssa.Value, depth int) bool {
	refs := v.Referrers()
	if refs == nil {
		return false
	}
	for _, r := range *refs {
		switch u := r.(type) {
		case *ssa.MapUpdate:
			if u.Map == v {
				return true
			}
		case *ssa.IndexAddr:
			if _, isSlice := v.Type().Underlying().(*types.Slice); isSlice {
				if refs := u.Referrers(); refs != nil {
					for _, rr := range *refs {
						if st, ok := rr.(*ssa.Store); ok && st.Addr == u {
							return true
						}
					}
				}
			}
		case *ssa.Call:
			if b, ok := u.Call.Value.(*ssa.Builtin); ok && (b.Name() == "delete" || b.Name() == "clear") {
				return true
			}
		}
	}
	return false
}

// globalAccesses returns instr's uses of owned package vars.
func (e *engine) globalAccesses(fn *ssa.Function, instr ssa.Instruction) []access {
	var out []access
	e.operands = instr.Operands(e.operands[:0]) // reused: this runs on every instruction of every dependency
	for _, op := range e.operands {
		g, ok := (*op).(*ssa.Global)
		if !ok {
			continue
		}
		v, ok := g.Object().(*types.Var)
		if !ok {
			continue
		}
		role, ok := e.p.FieldRole(v, nil)
		if !ok || isOwner(v.Type()) {
			continue
		}
		k := read
		switch u := instr.(type) {
		case *ssa.Store:
			if u.Addr == g {
				k = write
			}
		case *ssa.UnOp:
			if elementsWritten(u, 0) {
				k = write
			}
		case *ssa.FieldAddr:
			k = addrKind(u, 0)
		case *ssa.IndexAddr:
			k = addrKind(u, 0)
		case ssa.CallInstruction:
			k = write
		}
		name := v.Pkg().Name() + "." + v.Name()
		state := v.Name()
		if v.Pkg() != e.p.Pass.Pkg {
			state = name
		}
		out = append(out, access{role: orDefault(role), kind: k, pos: posOf(fn, instr), state: state, key: name})
	}
	return out
}

// ownerType returns the named struct type x selects from, for struct-level
// //confined:control.
func ownerType(t types.Type) *types.TypeName {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Origin().Obj()
	}
	return nil
}

// posOf is instr's position, or the nearest one before it in its block,
// or the function's: a finding never lacks a position.
func posOf(fn *ssa.Function, instr ssa.Instruction) token.Pos {
	if instr.Pos().IsValid() {
		return instr.Pos()
	}
	if blk := instr.Block(); blk != nil {
		for i := len(blk.Instrs) - 1; i >= 0; i-- {
			if blk.Instrs[i] == instr {
				for j := i - 1; j >= 0; j-- {
					if p := blk.Instrs[j].Pos(); p.IsValid() {
						return p
					}
				}
			}
		}
	}
	return fn.Pos()
}

func orDefault(role string) string {
	if role == "" {
		return "control"
	}
	return role
}
