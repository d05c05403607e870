package ownership

import (
	"bytes"
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/objects"
)

// The suggested fixes of rules 2 and 5 finish the job in one -fix run, and
// leave gofmt'd code gofmt'd: a second run finds nothing more to fix.

// controlDirective is the directive declaring role, as users write it:
// //confined:control for the default role.
func controlDirective(role string) string {
	if role == directive.DefaultRole {
		return "//confined:control"
	}
	return "//confined:control " + role
}

// declareEdit inserts //confined:control ROLE at the end of fd's doc
// comment, after a blank // line when the doc ends with prose (where gofmt
// would put one).
func declareEdit(fd *ast.FuncDecl, role string) analysis.TextEdit {
	text := controlDirective(role) + "\n"
	if fd.Doc != nil && len(fd.Doc.List) > 0 {
		last := fd.Doc.List[len(fd.Doc.List)-1].Text
		if _, isDirective := ast.ParseDirective(0, last); !isDirective && last != "//" {
			text = "//\n" + text
		}
	}
	return analysis.TextEdit{Pos: fd.Pos(), End: fd.Pos(), NewText: []byte(text)}
}

// ownerCallEdit inserts "x.f.method()" as the first statement of fn, where
// x is fn's receiver, or else its first parameter, whose struct type has
// exactly one confine.Owner field f, and f belongs to role; stmt is the
// statement inserted. ok is false when there is no such owner or no source
// to edit.
func (e *engine) ownerCallEdit(fn *ssa.Function, method, role string) (edit analysis.TextEdit, stmt string, ok bool) {
	fd := diag.EnclosingFunc(e.p.Pass.Files, fn.Pos())
	if fd == nil || fd.Name.Pos() != fn.Pos() || fd.Body == nil {
		return analysis.TextEdit{}, "", false
	}
	var holders []*ast.Field
	if fd.Recv != nil {
		holders = append(holders, fd.Recv.List...)
	}
	if fd.Type.Params != nil && len(fd.Type.Params.List) > 0 {
		holders = append(holders, fd.Type.Params.List[0])
	}
	for _, h := range holders {
		if len(h.Names) != 1 || h.Names[0].Name == "_" {
			continue
		}
		if f := e.soleOwnerField(e.p.Pass.TypesInfo.TypeOf(h.Type), role); f != "" {
			stmt = h.Names[0].Name + "." + f + "." + method + "()"
			edit, ok = e.insertFirst(fd.Body, stmt)
			return edit, stmt, ok
		}
	}
	return analysis.TextEdit{}, "", false
}

// soleOwnerField returns the name of t's only confine.Owner field, when
// t (or what it points to) is a struct with exactly one, owned by role.
func (e *engine) soleOwnerField(t types.Type, role string) string {
	st := objects.StructOf(t)
	if st == nil {
		return ""
	}
	name := ""
	for f := range st.Fields() {
		if !isOwner(f.Type()) || f.Embedded() {
			continue
		}
		if name != "" {
			return "" // several owners: which one is meant is the user's call
		}
		name = f.Name()
		if r, ok := e.p.FieldRole(f, ownerType(t)); ok && orDefault(r) != role || !ok && role != directive.DefaultRole {
			return ""
		}
	}
	return name
}

// insertFirst inserts stmt as the first statement of body. A body written
// on one line is spread over lines, as gofmt would leave it.
func (e *engine) insertFirst(body *ast.BlockStmt, stmt string) (analysis.TextEdit, bool) {
	fset := e.p.Pass.Fset
	if len(body.List) > 0 && fset.Position(body.List[0].Pos()).Line > fset.Position(body.Lbrace).Line {
		first := fset.Position(body.List[0].Pos())
		indent := strings.Repeat("\t", first.Column-1)
		return analysis.TextEdit{Pos: body.List[0].Pos(), End: body.List[0].Pos(), NewText: []byte(stmt + "\n" + indent)}, true
	}
	// { } or { x = 1 }: rewrite the inside.
	lbrace := fset.Position(body.Lbrace)
	src, err := e.p.Pass.ReadFile(lbrace.Filename)
	if err != nil {
		return analysis.TextEdit{}, false
	}
	rbrace := fset.Position(body.Rbrace)
	if rbrace.Offset > len(src) || lbrace.Offset >= rbrace.Offset {
		return analysis.TextEdit{}, false
	}
	inside := bytes.TrimSpace(src[lbrace.Offset+1 : rbrace.Offset])
	text := "\n\t" + stmt + "\n"
	if len(inside) > 0 {
		text += "\t" + string(inside) + "\n"
	}
	return analysis.TextEdit{Pos: body.Lbrace + 1, End: body.Rbrace, NewText: []byte(text)}, true
}

// fixes wraps edits as one suggested fix (none without edits).
func fixes(message string, edits ...analysis.TextEdit) []analysis.SuggestedFix {
	if len(edits) == 0 {
		return nil
	}
	return []analysis.SuggestedFix{{Message: message, TextEdits: edits}}
}
