// Package diag is how every confinelint analyzer reports: a finding always
// has a position, names its rule, carries the chain of calls that proves it
// as related information, and passes through //confined:ignore suppression.
package diag

import (
	"go/ast"
	"go/token"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/internal/directive"
)

// Finding is one diagnostic before suppression.
type Finding struct {
	Pos, End token.Pos
	// Fallback is used when Pos is invalid (synthetic SSA code): the call
	// site or enclosing function. A finding is never dropped for want of a
	// position.
	Fallback token.Pos
	Rule     string // category, e.g. "foreign-access"
	Message  string
	// Chain is the path that proves the finding, root first: each hop is
	// shown as related information at its position.
	Chain []Hop
	Fixes []analysis.SuggestedFix
	// Also are other positions that name the same problem (the other
	// witnesses of a lock-order cycle): a //confined:ignore at any of
	// them silences the finding too.
	Also []token.Pos
}

// Hop is one step of a chain.
type Hop struct {
	Pos  token.Pos
	What string // "onRevoked calls resetCounters"
}

// Reporter reports one analyzer's findings for one package.
type Reporter struct {
	pass     *analysis.Pass
	analyzer string
	ignores  []*directive.IgnoreComment
	used     map[*directive.IgnoreComment]bool
	seen     map[string]bool
	// generated holds the token.File of every generated file of the
	// package (standard "Code generated ... DO NOT EDIT." header).
	generated map[*token.File]bool
	// callees maps, per file, the '(' of each call to the callee's name
	// (see calleeName); built for a file when a finding first lands in it.
	callees map[*token.File]map[token.Pos]token.Pos
}

// NewReporter returns a reporter honouring the ignores of set.
func NewReporter(pass *analysis.Pass, analyzer string, set *directive.Set) *Reporter {
	r := &Reporter{pass: pass, analyzer: analyzer, used: map[*directive.IgnoreComment]bool{}, seen: map[string]bool{}}
	if set != nil {
		r.ignores = set.Ignores
	}
	for _, f := range pass.Files {
		if generated(f) {
			if r.generated == nil {
				r.generated = map[*token.File]bool{}
			}
			r.generated[pass.Fset.File(f.FileStart)] = true
		}
	}
	return r
}

// generated reports whether f is a generated file by the standard header
// ("// Code generated ... DO NOT EDIT." before the package clause). cgo's
// own header on the files it rewrites does not count: those files carry the
// user's code (their //line directives point back to it), so only a
// generated header of the user's file, which cgo keeps, makes it generated.
func generated(f *ast.File) bool {
	if !ast.IsGenerated(f) {
		return false
	}
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if generatedComment(c.Text) && !strings.Contains(c.Text, " by cmd/cgo") {
				return true
			}
		}
	}
	return false
}

// generatedComment is ast.IsGenerated's test for one comment: a line
// "// Code generated ... DO NOT EDIT.".
func generatedComment(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			return true
		}
	}
	return false
}

// inGenerated reports whether pos lies in a generated file of the package.
// Findings there are not reported: nobody can act on them. The code is
// still analysed, so a finding it causes in a hand-written file (a call
// into a confined function, say) is reported there.
func (r *Reporter) inGenerated(pos token.Pos) bool {
	return len(r.generated) > 0 && pos.IsValid() && r.generated[r.pass.Fset.File(pos)]
}

// Report emits f unless an ignore covers it or it lies in a generated
// file. Identical findings (same position, rule and message) are reported
// once.
func (r *Reporter) Report(f Finding) {
	pos := f.Pos
	if !pos.IsValid() {
		pos = f.Fallback
	}
	if !pos.IsValid() && len(r.pass.Files) > 0 {
		pos = r.pass.Files[0].Package
	}
	pos = r.calleeName(pos)
	if r.inGenerated(pos) {
		return
	}
	if ig := r.ignoreFor(pos); ig != nil {
		r.used[ig] = true
		return
	}
	for _, p := range f.Also {
		if ig := r.ignoreFor(p); ig != nil && p.IsValid() {
			r.used[ig] = true
			return
		}
	}
	msg := f.Message + " [" + f.Rule + "]"
	key := r.pass.Fset.Position(pos).String() + msg
	if r.seen[key] {
		return
	}
	r.seen[key] = true
	end := f.End
	if end < pos {
		end = token.NoPos
	}
	d := analysis.Diagnostic{Pos: pos, End: end, Category: f.Rule, Message: msg, SuggestedFixes: f.Fixes}
	for _, h := range f.Chain {
		if h.Pos.IsValid() {
			d.Related = append(d.Related, analysis.RelatedInformation{Pos: r.calleeName(h.Pos), Message: h.What})
		}
	}
	r.pass.Report(d)
}

func (r *Reporter) ignoreFor(pos token.Pos) *directive.IgnoreComment {
	p := r.pass.Fset.Position(pos)
	for _, ig := range r.ignores {
		if ig.Analyzers != nil && !contains(ig.Analyzers, r.analyzer) {
			continue
		}
		if ig.DeclPos.IsValid() && ig.DeclPos <= pos && pos < ig.DeclEnd {
			return ig
		}
		if ig.Line == p.Line && ig.File == p.Filename {
			return ig
		}
	}
	return nil
}

// Used returns the ignores this reporter applied, for the unused-ignore
// check.
func (r *Reporter) Used() map[*directive.IgnoreComment]bool { return r.used }

// ReportProblems reports the directive problems owned by this analyzer.
func (r *Reporter) ReportProblems(set *directive.Set) {
	for _, p := range set.Problems {
		if p.Analyzer != r.analyzer {
			continue
		}
		f := Finding{Pos: p.Pos, End: p.End, Rule: p.Category, Message: p.Message}
		if p.Decl.IsValid() {
			f.Chain = []Hop{{Pos: p.Decl, What: "declaration of " + p.DeclName + ", which the comment documents"}}
		}
		if p.Fix != nil {
			f.Fixes = []analysis.SuggestedFix{{
				Message:   "write " + p.Fix.Text,
				TextEdits: []analysis.TextEdit{{Pos: p.Fix.Pos, End: p.Fix.End, NewText: []byte(p.Fix.Text)}},
			}}
		}
		r.Report(f)
	}
}

// ReportUnusedIgnores reports every ignore for which no analyzer's reporter
// suppressed a finding (a +checklocksignore is never reported, as in
// checklocks). Only the confined analyzer calls it, after the
// other two have run.
func (r *Reporter) ReportUnusedIgnores(used ...map[*directive.IgnoreComment]bool) {
	for _, ig := range r.ignores {
		hit := r.used[ig]
		for _, u := range used {
			hit = hit || u[ig]
		}
		if !hit && !ig.Property {
			spelling := ig.Spelling
			if spelling == "" {
				spelling = "//confined:ignore"
			}
			r.Report(Finding{Pos: ig.Pos, Rule: "unused-ignore", Message: "this " + spelling + " silences no finding; remove it"})
		}
	}
}

// Chain renders names as "a -> b -> c".
func Chain(names ...string) string { return strings.Join(names, " -> ") }

// EnclosingFunc returns the func declaration containing pos, for
// fallbacks and fixes.
func EnclosingFunc(files []*ast.File, pos token.Pos) *ast.FuncDecl {
	for _, f := range files {
		if f.FileStart <= pos && pos <= f.FileEnd {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Pos() <= pos && pos < fd.End() {
					return fd
				}
			}
		}
	}
	return nil
}

// FuncKeyword is where the func declaration whose name is at name starts
// (its func keyword), where findings about a declaration sit and where a
// directive goes; name itself when it names no func declaration (a
// closure).
func FuncKeyword(files []*ast.File, name token.Pos) token.Pos {
	if fd := EnclosingFunc(files, name); fd != nil && fd.Name.Pos() == name {
		return fd.Pos()
	}
	return name
}

// UsedIgnores is the result type of lockorder and revokepath: the ignores
// they applied, so confined can report the ones nobody used.
type UsedIgnores = map[*directive.IgnoreComment]bool

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
