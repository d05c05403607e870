// Package infer proposes confinelint annotations for code that has none,
// from the code alone, for the suggest analyzer.
//
// Unannotated code gets no finding from the checks, which users read as
// "safe". Inference turns the code's own majority behaviour into
// annotations and its exceptions into the findings a second run would
// report, in the manner of "bugs as deviant behaviour" (Engler et al.)
// and RacerD's ownership and lock inference:
//
//   - guardedby: a field (or package var) accessed with the same lock held
//     at nearly every site; the sites without it are the likely races.
//     Held locks come from a must-held analysis over each function's CFG,
//     with the locks an unexported function's every caller holds at its
//     calls (round after round until they no longer change).
//   - entry and control: a function started as a goroutine (a go target or
//     an exported loop its callers start) whose body is a loop receiving
//     from a channel; a field most of whose writes run on that goroutine
//     and that another root touches is owned by it, and the other root's
//     accesses are the deviant sites.
//   - spawns: a function whose func-typed parameter reaches another
//     goroutine: a go statement, an asynchronous API, or a field or
//     channel whose values a goroutine calls (a worker pool's queue, a
//     callback registry).
//   - drain and commit, on the entry's role, where the shape is plain: a
//     loop over a non-blocking select that receives (drain), a function
//     passing state to a Commit* or Mark* method of another package
//     (commit).
//
// Every suggestion carries its evidence (counts of sites) and a score;
// Run ranks them by score. Nothing here runs unless the suggest analyzer
// is selected.
package infer

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// Suggestion is one annotation to add.
type Suggestion struct {
	Rule      string    // diagnostic category: "suggest-guardedby"...
	Pos       token.Pos // the declaration
	Directive string    // "guardedby mu", "control", "entry poll", "spawns f"
	Subject   string    // "Cache.hits", "Consumer.Run"
	Evidence  string    // the counts behind it, for the message
	Score     float64   // higher is surer
	Deviants  []Site    // the accesses a second run would report
	// Node is the declaration the directive goes on: an *ast.Field, an
	// *ast.FuncDecl, an *ast.ValueSpec in a group or a one-var *ast.GenDecl.
	Node ast.Node
	// spec is a spawns suggestion's parameter in -confined.async form.
	spec string
	// Rank is the suggestion's place by Score among the package's (1 is
	// the surest), Of their number.
	Rank, Of int
}

// Site is one access, for messages.
type Site struct {
	Pos  token.Pos
	What string // "c.hits read in Cache.Peek"
}

// state is the inference over one package.
type state struct {
	p         *program.Package
	ctx       *roots.Contexts
	sites     []site
	testSites []site                      // in _test.go files: not evidence, see add
	siteAt    map[siteKey]int             // index in sites, see add
	decls     map[types.Object]ast.Node   // fields, vars and funcs of the package's files
	texts     map[token.Pos]string        // source text of selectors (by Sel) and calls (by '(')
	roles     map[*ssa.Function]*roleInfo // entry candidates
	// globals maps the paths of the package\'s vars to them (for locks).
	globals map[string]*types.Var
	// ctorOnly marks the functions called only on an object under
	// construction (see collectSites).
	ctorOnly map[*ssa.Function]bool
}

// Run returns the package's suggestions, ranked.
func Run(p *program.Package, ctx *roots.Contexts) []Suggestion {
	s := &state{p: p, ctx: ctx}
	s.index()
	var out []Suggestion
	spawns := s.spawns()
	out = append(out, spawns...)
	if len(spawns) > 0 {
		// The package's own pools: their jobs run on other goroutines.
		s.ctx = withSpawns(p, spawns)
	}
	s.collectSites()
	guarded := s.guardedBy()
	out = append(out, guarded...)
	out = append(out, s.ownership(guarded)...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Pos < out[j].Pos
	})
	for i := range out {
		out[i].Rank, out[i].Of = i+1, len(out)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out
}

// index records the declarations directives can go on, and the source
// text of selectors for messages.
func (s *state) index() {
	s.decls = map[types.Object]ast.Node{}
	s.texts = map[token.Pos]string{}
	info := s.p.Pass.TypesInfo
	for _, f := range s.p.Pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if len(n.Names) == 1 {
					s.decls[info.Defs[n.Names[0]]] = n
				}
			case *ast.GenDecl:
				// An ungrouped var's directive goes above the keyword.
				if vs, ok := soleSpec(n); ok {
					s.decls[info.Defs[vs.Names[0]]] = n
					return false
				}
			case *ast.ValueSpec:
				if len(n.Names) == 1 {
					s.decls[info.Defs[n.Names[0]]] = n
				}
			case *ast.FuncDecl:
				s.decls[info.Defs[n.Name]] = n
			case *ast.SelectorExpr:
				s.texts[n.Sel.Pos()] = types.ExprString(n)
			case *ast.CallExpr:
				s.texts[n.Lparen] = types.ExprString(n)
			}
			return true
		})
	}
}

// soleSpec returns the one var a "var x T" declaration declares.
func soleSpec(d *ast.GenDecl) (*ast.ValueSpec, bool) {
	if d.Tok != token.VAR || d.Lparen.IsValid() || len(d.Specs) != 1 {
		return nil, false
	}
	vs, ok := d.Specs[0].(*ast.ValueSpec)
	return vs, ok && len(vs.Names) == 1
}

// annotated reports whether obj carries a directive already.
func (s *state) annotated(obj types.Object) bool {
	d := s.p.Decl(obj)
	return d != nil && len(d.Items) > 0
}

func (s *state) name(fn *ssa.Function) string { return program.FuncName(fn, s.p.Pass.Pkg) }

// fieldName is "Cache.hits" for a field, "hits" for a package var.
func fieldName(v *types.Var, owner *types.Named) string {
	if owner != nil {
		return owner.Obj().Name() + "." + v.Name()
	}
	return v.Name()
}
