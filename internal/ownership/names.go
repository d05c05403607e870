package ownership

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// exprName names a field access for messages as the user wrote it
// ("c.inflight"), found by the position SSA gives explicit selections;
// implicit ones (promoted fields) are rebuilt from the SSA value.
func (e *engine) exprName(pos token.Pos, x ssa.Value, field string) string {
	if s, ok := e.exprAt(pos); ok {
		return s
	}
	return valueName(x, 0) + "." + field
}

// exprAt returns the source text of the expression SSA positions at pos:
// a selector (by its Sel), an index expression (by its '['), a call (by
// its '('), a range statement (by its "range"), the value of a send (by
// its arrow).
func (e *engine) exprAt(pos token.Pos) (string, bool) {
	if !pos.IsValid() {
		return "", false
	}
	if e.selectors == nil {
		e.indexSelectors()
	}
	s, ok := e.selectors[pos]
	return s, ok
}

// argsAt returns the source text of the arguments of the call whose '('
// is at pos (a method value's receiver included as written: "ps.reset").
func (e *engine) argsAt(pos token.Pos) []string {
	if e.selectors == nil {
		e.indexSelectors()
	}
	return e.callArgs[pos]
}

// indexSelectors indexes the source text of the expressions exprAt knows.
// Built lazily: only packages with findings pay for it.
func (e *engine) indexSelectors() {
	e.selectors = map[token.Pos]string{}
	e.callArgs = map[token.Pos][]string{}
	for _, f := range e.p.Pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				e.selectors[n.Sel.Pos()] = types.ExprString(n)
			case *ast.IndexExpr:
				e.selectors[n.Lbrack] = types.ExprString(n)
			case *ast.CallExpr:
				e.selectors[n.Lparen] = types.ExprString(n)
				args := make([]string, len(n.Args))
				for i, a := range n.Args {
					args[i] = types.ExprString(a)
				}
				e.callArgs[n.Lparen] = args
			case *ast.SendStmt:
				e.selectors[n.Arrow] = types.ExprString(n.Value) // the value sent
			case *ast.RangeStmt:
				e.selectors[n.Range] = "range " + types.ExprString(n.X)
				e.selectors[n.For] = "range " + types.ExprString(n.X)
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
		return valueName(x.X, depth+1) + "." + objects.StructOf(x.X.Type()).Field(x.Field).Name()
	case *ssa.Field:
		return valueName(x.X, depth+1) + "." + objects.StructOf(x.X.Type()).Field(x.Field).Name()
	}
	return typeLabel(v.Type())
}

func typeLabel(t types.Type) string {
	if tn := ownerType(t); tn != nil {
		return tn.Name()
	}
	return "value"
}
