package suggest

import (
	_ "embed"
	"fmt"
	"go/ast"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/infer"
	"github.com/confinelint/confinelint/internal/summary"
)

//go:embed doc.go
var doc string

// Analyzer proposes annotations. It is not one of confinelint's default
// checks: the driver runs it only when asked (-suggest).
var Analyzer = &analysis.Analyzer{
	Name:     "suggest",
	Doc:      diag.Doc(doc, "suggest"),
	URL:      "https://github.com/confinelint/confinelint/blob/main/docs/checks.md#suggest",
	Requires: []*analysis.Analyzer{summary.Analyzer},
	Run:      run,
}

// maxListed is how many deviant sites a message names; all of them are
// related information.
const maxListed = 3

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[summary.Analyzer].(*summary.Result)
	r := diag.NewReporter(pass, "suggest", res.Directives())
	for _, sg := range infer.Run(res.Package, res.Contexts) {
		f := diag.Finding{Pos: sg.Pos, Rule: sg.Rule, Message: message(pass, sg)}
		for _, d := range sg.Deviants {
			f.Chain = append(f.Chain, diag.Hop{Pos: d.Pos, What: "deviant: " + d.What})
		}
		if fix, ok := insert(pass, sg.Node, "//confined:"+sg.Directive); ok {
			f.Fixes = []analysis.SuggestedFix{fix}
		}
		r.Report(f)
	}
	return nil, nil
}

// message: "Cache.hits: add //confined:guardedby mu (rank 1 of 3): mu is
// held at 9 of 10 accesses; 1 deviant: c.hits written in Cache.Peek
// (cache.go:40)".
func message(pass *analysis.Pass, sg infer.Suggestion) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: add //confined:%s (rank %d of %d): %s", sg.Subject, sg.Directive, sg.Rank, sg.Of, sg.Evidence)
	if n := len(sg.Deviants); n > 0 {
		fmt.Fprintf(&b, "; %d deviant", n)
		if n > 1 {
			b.WriteString("s")
		}
		for i, d := range sg.Deviants {
			if i == maxListed {
				fmt.Fprintf(&b, ", and %d more", n-maxListed)
				break
			}
			sep := ", "
			if i == 0 {
				sep = ": "
			}
			p := pass.Fset.Position(d.Pos)
			fmt.Fprintf(&b, "%s%s (%s:%d)", sep, d.What, baseName(p.Filename), p.Line)
		}
	}
	return b.String()
}

// insert returns a fix adding line (a directive) on its own line above
// node, indented like it, at the end of its doc comment.
func insert(pass *analysis.Pass, node ast.Node, line string) (analysis.SuggestedFix, bool) {
	if node == nil {
		return analysis.SuggestedFix{}, false
	}
	tf := pass.Fset.File(node.Pos())
	if tf == nil {
		return analysis.SuggestedFix{}, false
	}
	src, err := pass.ReadFile(tf.Name())
	if err != nil {
		return analysis.SuggestedFix{}, false
	}
	start := tf.LineStart(tf.Line(node.Pos()))
	indent := string(src[tf.Offset(start):tf.Offset(node.Pos())])
	if strings.TrimLeft(indent, " \t") != "" {
		return analysis.SuggestedFix{}, false // not first on its line
	}
	text := indent + line + "\n"
	if doc := topLevelDoc(node); doc != nil && !isDirective(doc.List[len(doc.List)-1].Text) {
		text = "//\n" + text
	}
	return analysis.SuggestedFix{
		Message:   "add " + line,
		TextEdits: []analysis.TextEdit{{Pos: start, End: start, NewText: []byte(text)}},
	}, true
}

// topLevelDoc is the doc comment of a func or var declaration: gofmt
// keeps a blank comment line between the text of those and directives
// (it leaves struct fields' comments alone).
func topLevelDoc(node ast.Node) *ast.CommentGroup {
	switch n := node.(type) {
	case *ast.FuncDecl:
		return n.Doc
	case *ast.GenDecl:
		return n.Doc
	}
	return nil
}

// isDirective reports whether a comment is a directive line ("//go:x",
// "//confined:x"), which gofmt keeps apart from the doc text.
func isDirective(c string) bool {
	rest, ok := strings.CutPrefix(c, "//")
	if !ok || rest == "" || rest[0] == ' ' {
		return false
	}
	colon := strings.IndexByte(rest, ':')
	return colon > 0 && !strings.ContainsAny(rest[:colon], " \t")
}

func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}
