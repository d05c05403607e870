package diag

import (
	"go/ast"
	"go/token"

	"github.com/confinelint/confinelint/internal/directive"
)

// calleeName moves a position at a call's '(' to the callee's name: SSA
// places a call at its '(', but "c.commit()" reads as a call of commit, and
// an editor's caret on "commit" is what the user looks for. Other
// positions are returned unchanged.
func (r *Reporter) calleeName(pos token.Pos) token.Pos {
	tf := r.pass.Fset.File(pos)
	if tf == nil {
		return pos
	}
	index, ok := r.callees[tf]
	if !ok {
		index = r.indexCalls(tf)
		if r.callees == nil {
			r.callees = map[*token.File]map[token.Pos]token.Pos{}
		}
		r.callees[tf] = index
	}
	if name, ok := index[pos]; ok {
		return name
	}
	return pos
}

// indexCalls maps the '(' of every call in the file tf to its callee's
// name.
func (r *Reporter) indexCalls(tf *token.File) map[token.Pos]token.Pos {
	index := map[token.Pos]token.Pos{}
	for _, f := range r.pass.Files {
		if r.pass.Fset.File(f.FileStart) != tf {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				index[call.Lparen] = nameOf(call.Fun)
			}
			return true
		})
	}
	return index
}

// nameOf is where the name of a called expression starts: the selector of
// x.f, the identifier f, through parentheses and type arguments; any other
// callee (a function literal, a call result) starts where it starts.
func nameOf(fun ast.Expr) token.Pos {
	if id := directive.NameIdent(fun); id != nil {
		return id.Pos()
	}
	return fun.Pos()
}
