package ownership

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// memOp is one touch of the memory a reference points to: a field or
// element read or written through it, a map looked up or updated, the
// whole object loaded or stored.
type memOp struct {
	base ssa.Value // the reference
	kind kind
	at   ssa.Instruction
}

// memOps appends instr's touches of memory through references. Loads
// and stores of local variables, and address computations whose only use
// is a further selection (ps.a.b: the outer one is the touch), are none.
func (e *engine) memOps(out []memOp, instr ssa.Instruction) []memOp {
	switch in := instr.(type) {
	case *ssa.FieldAddr:
		if !objects.OnlySelected(in) && !e.selfGuarded(in.X.Type(), in.Field) {
			out = append(out, memOp{in.X, addrKind(in, 0), in})
		}
	case *ssa.IndexAddr:
		if !objects.OnlySelected(in) {
			out = append(out, memOp{in.X, addrKind(in, 0), in})
		}
	case *ssa.UnOp:
		if in.Op == token.MUL && !isAddress(in.X) {
			out = append(out, memOp{in.X, read, in})
		}
	case *ssa.Store:
		if !isAddress(in.Addr) {
			out = append(out, memOp{in.Addr, write, in})
		}
	case *ssa.Lookup:
		if isMap(in.X.Type()) {
			out = append(out, memOp{in.X, read, in})
		}
	case *ssa.MapUpdate:
		out = append(out, memOp{in.Map, write, in})
	case *ssa.Range:
		if isMap(in.X.Type()) {
			out = append(out, memOp{in.X, read, in})
		}
	case *ssa.Call:
		b, ok := in.Call.Value.(*ssa.Builtin)
		if !ok || len(in.Call.Args) == 0 {
			break
		}
		arg := in.Call.Args[0]
		switch b.Name() {
		case "len", "cap":
			if isMap(arg.Type()) {
				out = append(out, memOp{arg, read, in})
			}
		case "delete", "clear", "append":
			out = append(out, memOp{arg, write, in})
		case "copy":
			out = append(out, memOp{arg, write, in})
			if len(in.Call.Args) > 1 {
				out = append(out, memOp{in.Call.Args[1], read, in})
			}
		}
	}
	return out
}

// isAddress reports whether a load or store at v is one of a field or
// element (a memOp of its own) or of a variable (no touch of shared
// memory): only a load or store through a plain pointer (*p) remains.
func isAddress(v ssa.Value) bool {
	switch v.(type) {
	case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.Alloc, *ssa.FreeVar, *ssa.Global:
		return true
	}
	return false
}

func isMap(t types.Type) bool {
	_, ok := t.Underlying().(*types.Map)
	return ok
}

// selfGuarded reports whether field index of the struct x points to
// synchronises itself: the field is a lock, an atomic, a channel or an
// Owner, it carries a lock annotation of its own, or its struct holds a
// lock (a type that guards its fields, like a counter with a mutex).
// Accesses to it through an owned reference need no owner.
func (e *engine) selfGuarded(x types.Type, index int) bool {
	st := objects.StructOf(x)
	if st == nil || index >= st.NumFields() {
		return true
	}
	f := st.Field(index)
	if _, isChan := f.Type().Underlying().(*types.Chan); isChan || lockop.IsSyncType(f.Type()) || isOwner(f.Type()) {
		return true
	}
	d := e.p.Decl(f)
	for _, v := range []directive.Verb{directive.GuardedBy, directive.Atomic} {
		if _, ok := d.Has(string(v)); ok {
			return true
		}
	}
	for g := range st.Fields() {
		if lockop.IsLocker(g.Type()) {
			return true
		}
	}
	return false
}

// opName renders a memOp for messages as the user wrote it.
func (e *engine) opName(op memOp) string {
	switch in := op.at.(type) {
	case *ssa.FieldAddr:
		return e.exprName(in.Pos(), in.X, objects.StructOf(in.X.Type()).Field(in.Field).Name())
	case *ssa.UnOp:
		return "*" + e.valueText(in.X)
	case *ssa.Store:
		return "*" + e.valueText(in.Addr)
	}
	if s, ok := e.exprAt(op.at.Pos()); ok {
		return s
	}
	return e.valueText(op.base) + "[...]"
}

// valueText names a value as the user wrote it where SSA kept its
// position, else from the SSA value.
func (e *engine) valueText(v ssa.Value) string {
	if s, ok := e.exprAt(v.Pos()); ok {
		return s
	}
	return valueName(v, 0)
}

// ownedOp reports whether op selects a field that is owned state itself
// (collect reports it as a direct access wherever it is).
func (e *engine) ownedOp(op memOp) bool {
	fa, ok := op.at.(*ssa.FieldAddr)
	if !ok {
		return false
	}
	field := objects.StructOf(fa.X.Type()).Field(fa.Field)
	_, owned := e.p.FieldRole(field, ownerType(fa.X.Type()))
	return owned
}
