package ownership

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/objects"
)

// The runtime half, recognised by full name so that any import alias or
// wrapper method set works.
const (
	confinePkg = "github.com/confinelint/confinelint/confine"
	bindName   = "(*" + confinePkg + ".Owner).Bind"
	assertName = "(*" + confinePkg + ".Owner).Assert"
)

// isOwner reports whether t is confine.Owner (or a pointer to it): the
// owner itself is meant to be used from any goroutine.
func isOwner(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == confinePkg && n.Obj().Name() == "Owner"
}

// scanRuntime records which functions call Bind and Assert, and the role
// an Assert implies for a function that declares none (rule 5): the role
// of the Owner field or var asserted, control when that is unannotated.
func (e *engine) scanRuntime(fn *ssa.Function) {
	for _, blk := range fn.Blocks {
		for _, instr := range blk.Instrs {
			call, ok := instr.(ssa.CallInstruction)
			if !ok {
				continue
			}
			callee := call.Common().StaticCallee()
			if callee == nil {
				continue
			}
			obj, ok := callee.Object().(*types.Func)
			if !ok || obj.Pkg() == nil || obj.Pkg().Path() != confinePkg {
				continue // FullName allocates: only confine's methods need it
			}
			switch obj.FullName() {
			case bindName:
				e.binds[fn] = true
			case assertName:
				e.asserts[fn] = true
				if _, declared := e.declaredRole(fn); !declared && !e.hasContextDecl(fn) && fn.Parent() == nil {
					if args := call.Common().Args; len(args) > 0 {
						e.implied[fn] = e.ownerRole(args[0])
					}
				}
			}
		}
	}
}

// ownerRole is the role of the Owner at addr: its field's or var's
// //confined:control role, else control.
func (e *engine) ownerRole(addr ssa.Value) string {
	switch a := addr.(type) {
	case *ssa.FieldAddr:
		if st := objects.StructOf(a.X.Type()); st != nil {
			if role, ok := e.p.FieldRole(st.Field(a.Field), ownerType(a.X.Type())); ok {
				return orDefault(role)
			}
		}
	case *ssa.Global:
		if v, ok := a.Object().(*types.Var); ok {
			if role, ok := e.p.FieldRole(v, nil); ok {
				return orDefault(role)
			}
		}
	}
	return directive.DefaultRole
}

// hasContextDecl reports whether fn declares how it runs other than by a
// role: entry, callback, serialized or any.
func (e *engine) hasContextDecl(fn *ssa.Function) bool {
	d := e.p.FuncDecl(fn)
	for _, v := range []directive.Verb{directive.Entry, directive.Callback, directive.Serialized, directive.Any} {
		if _, ok := d.Has(string(v)); ok {
			return true
		}
	}
	return false
}
