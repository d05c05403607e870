package ownership

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// exprName names a field access for messages as the user wrote it
// ("c.inflight"), found by the position SSA gives explicit selections;
// implicit ones (promoted fields) are rebuilt from the SSA value.
func (e *engine) exprName(pos token.Pos, x ssa.Value, field string) string {
	if pos.IsValid() {
		if e.selectors == nil {
			e.indexSelectors()
		}
		if s, ok := e.selectors[pos]; ok {
			return s
		}
	}
	return valueName(x, 0) + "." + field
}

// indexSelectors maps each selector's Sel position to its source text.
// Built lazily: only packages with findings pay for it.
func (e *engine) indexSelectors() {
	e.selectors = map[token.Pos]string{}
	for _, f := range e.p.Pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				e.selectors[sel.Sel.Pos()] = types.ExprString(sel)
			}
			return true
		})
	}
}

func valueName(v ssa.Value, depth int) string {
	if depth > 8 {
		return typeLabel(v.Type())
	}
	switch x := v.(type) {
	case *ssa.Parameter:
		return x.Name()
	case *ssa.FreeVar:
		return x.Name()
	case *ssa.Global:
		return x.Name()
	case *ssa.UnOp:
		if x.Op == token.MUL {
			return valueName(x.X, depth+1)
		}
	case *ssa.FieldAddr:
		return valueName(x.X, depth+1) + "." + structOf(x.X.Type()).Field(x.Field).Name()
	case *ssa.Field:
		return valueName(x.X, depth+1) + "." + structOf(x.X.Type()).Field(x.Field).Name()
	}
	return typeLabel(v.Type())
}

func typeLabel(t types.Type) string {
	if tn := ownerType(t); tn != nil {
		return tn.Name()
	}
	return "value"
}
