// Package ownership is the summary engine behind the confined analyzer:
// which role-confined state each function touches, on which goroutine
// contexts, through which chain of calls.
//
// It works in four steps over the package's SSA: find every direct access
// of owned state (fields, package vars, calls of role functions) minus
// construction and channel-received values; take the goroutine roots of
// package roots, adding the functions whose declaration fixes their
// context; propagate those roots through synchronous calls, stopping at
// every root so that calls into declared functions are checked at the
// call site; then judge every access on every context that reaches it.
package ownership

import (
	"go/token"
	"sort"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// Summary is the ownership result for one package.
type Summary struct {
	// Findings are the confined analyzer's diagnostics, sorted by
	// position, rule and message.
	Findings []diag.Finding
}

type engine struct {
	p   *program.Package
	ctx *roots.Contexts

	direct     map[*ssa.Function][]access
	localCalls map[*ssa.Function][]localCall
	binds      map[*ssa.Function]bool
	asserts    map[*ssa.Function]bool
	implied    map[*ssa.Function]string // role implied by an Assert
	selectors  map[token.Pos]string     // source text by position, see exprAt
	callArgs   map[token.Pos][]string   // argument texts by a call's '('
	operands   []*ssa.Value             // scratch buffer for globalAccesses

	roots  []*roots.Root
	rootOf map[*ssa.Function]*roots.Root
	reach  map[*ssa.Function][]roots.Reach
	byRoot map[*roots.Root][]roots.Reach // every function a root reaches

	sums    map[*ssa.Function][]touch
	summing map[*ssa.Function]bool

	// Rule 6 (derived.go): references read out of owned state.
	returning map[*ssa.Function]bool // accessors being walked (recursion guard)
	uses      map[paramKey]usage     // paramUse memo
	handOffs  []handOff
	sends     []sendSite
	asyncAt   map[token.Pos][]*roots.Root // asynchronous roots by registering call

	findings []diag.Finding

	bareObjects *objects.Index // see objects()
}

// Summarize computes the package's ownership summary and exports its facts.
func Summarize(p *program.Package, ctx *roots.Contexts) *Summary {
	e := &engine{
		p: p, ctx: ctx,
		direct:     map[*ssa.Function][]access{},
		localCalls: map[*ssa.Function][]localCall{},
		binds:      map[*ssa.Function]bool{},
		asserts:    map[*ssa.Function]bool{},
		implied:    map[*ssa.Function]string{},
		rootOf:     map[*ssa.Function]*roots.Root{},
		byRoot:     map[*roots.Root][]roots.Reach{},
		sums:       map[*ssa.Function][]touch{},
		summing:    map[*ssa.Function]bool{},
		returning:  map[*ssa.Function]bool{},
		uses:       map[paramKey]usage{},
	}
	for _, fn := range p.Funcs {
		e.scanRuntime(fn)
	}
	n := 0
	for _, fn := range p.Funcs {
		e.direct[fn] = e.collect(fn)
		n += len(e.direct[fn])
	}
	if n == 0 && len(e.findings) == 0 && len(e.implied) == 0 && (p.Directives == nil || len(p.Directives.Objects) == 0) {
		return &Summary{} // the common case for dependencies: nothing owned
	}
	e.collectDerived()
	e.buildRoots()
	e.reach = ctx.Propagate(e.roots, func(fn *ssa.Function) bool { return e.rootOf[fn] != nil })
	for _, fn := range p.Funcs {
		for _, r := range e.reach[fn] {
			e.byRoot[r.Root] = append(e.byRoot[r.Root], r)
		}
	}
	e.checkAccesses()
	e.checkHandOffs()
	e.checkSends()
	e.checkUndeclared()
	e.checkRuntime()
	e.exportFacts()
	sort.SliceStable(e.findings, func(i, j int) bool {
		a, b := e.findings[i], e.findings[j]
		if a.Pos != b.Pos {
			return a.Pos < b.Pos
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
	return &Summary{Findings: e.findings}
}

// buildRoots starts from package roots' roots and adds what declarations
// fix: an Assert turns an unknown-callers root into a declared one, and
// unexported functions declared with a role or //confined:any become roots
// so that their bodies are judged by their declaration and calls into them
// at the call site.
func (e *engine) buildRoots() {
	for _, r := range e.ctx.Roots {
		if r.Func == nil || !e.p.FuncSet[r.Func] {
			continue
		}
		if r.Kind == roots.KindUnknown {
			if e.ctx.RootOf(r.Func) != r {
				continue // also a handler or go target: that root says more
			}
			if role, ok := e.implied[r.Func]; ok {
				r = &roots.Root{Kind: roots.KindDeclared, Role: role, Func: r.Func, Pos: r.Pos, Via: r.Via}
			}
		}
		e.addRoot(r)
	}
	for _, fn := range e.p.Funcs {
		if e.rootOf[fn] != nil {
			continue
		}
		name := program.FuncName(fn, e.p.Pass.Pkg)
		if role, ok := e.declaredRole(fn); ok {
			e.addRoot(&roots.Root{Kind: roots.KindDeclared, Role: role, Func: fn, Pos: fn.Pos(), Via: name})
		} else if _, ok := e.p.FuncDecl(fn).Has(string(directive.Any)); ok {
			e.addRoot(&roots.Root{Kind: roots.KindAny, Func: fn, Pos: fn.Pos(), Via: name})
		}
	}
}

func (e *engine) addRoot(r *roots.Root) {
	e.roots = append(e.roots, r)
	if e.rootOf[r.Func] == nil {
		e.rootOf[r.Func] = r
	}
}

// unknownRoot returns fn's root when fn is an undeclared exported or
// escaping function, whose summary callers see at the call site.
func (e *engine) unknownRoot(fn *ssa.Function) *roots.Root {
	if r := e.rootOf[fn]; r != nil && r.Kind == roots.KindUnknown {
		return r
	}
	return nil
}
