// Package program is the per-package view every confinelint engine works
// on: the analysis pass, its SSA, the parsed directives, and declaration
// lookup that merges this package's directives with imported facts.
package program

import (
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/directive"
)

// Package is one package under analysis.
type Package struct {
	Pass       *analysis.Pass
	SSA        *buildssa.SSA
	Directives *directive.Set

	// Funcs is every source function of the package (named, methods and
	// closures) in source order, and FuncSet the same as a set.
	Funcs   []*ssa.Function
	FuncSet map[*ssa.Function]bool

	decls map[types.Object]*facts.Decl

	named    []*types.Named            // NamedTypes, nil until first use
	byMethod map[string][]*types.Named // TypesWithMethod's index
}

// New builds the view. decls are this package's own declarations in fact
// form (see DeclsFromDirectives).
func New(pass *analysis.Pass, ssaRes *buildssa.SSA, set *directive.Set, decls map[types.Object]*facts.Decl) *Package {
	p := &Package{Pass: pass, SSA: ssaRes, Directives: set, decls: decls, FuncSet: map[*ssa.Function]bool{}}
	for _, fn := range ssaRes.SrcFuncs {
		p.Funcs = append(p.Funcs, fn)
		p.FuncSet[fn] = true
	}
	p.addInitLiterals()
	return p
}

// addInitLiterals adds the function literals of package-level var
// initializers (`var sysVars = []*SysVar{{Validation: func(...) {...}}}`,
// a table of handlers), which SrcFuncs leaves out with the synthetic init
// that builds them: they run as much as any declared function, reached
// through the table.
func (p *Package) addInitLiterals() {
	if p.SSA == nil || p.SSA.Pkg == nil {
		return
	}
	init := p.SSA.Pkg.Func("init")
	if init == nil {
		return
	}
	var add func(fn *ssa.Function)
	add = func(fn *ssa.Function) {
		if p.FuncSet[fn] {
			return
		}
		p.Funcs = append(p.Funcs, fn)
		p.FuncSet[fn] = true
		for _, lit := range fn.AnonFuncs {
			add(lit)
		}
	}
	for _, lit := range init.AnonFuncs {
		add(lit)
	}
}

// Decl returns the declarations on obj: from this package's directives, or
// from the fact its own package exported. Generic instantiations resolve to
// their origin. It returns nil when obj has no declaration.
func (p *Package) Decl(obj types.Object) *facts.Decl {
	obj = Origin(obj)
	if obj == nil {
		return nil
	}
	if d, ok := p.decls[obj]; ok {
		return d
	}
	if obj.Pkg() == nil || obj.Pkg() == p.Pass.Pkg {
		return nil
	}
	var d facts.Decl
	if p.Pass.ImportObjectFact(obj, &d) {
		return &d
	}
	return nil
}

// FuncDecl returns the declaration of fn's source function (closures have
// none).
func (p *Package) FuncDecl(fn *ssa.Function) *facts.Decl {
	if fn == nil {
		return nil
	}
	if o := fn.Origin(); o != nil {
		fn = o
	}
	if obj := fn.Object(); obj != nil {
		return p.Decl(obj)
	}
	return nil
}

// FieldRole returns the role owning field or package var v: its own
// //confined:control, or that of the struct type declaring it (owner, when
// the caller knows it). ok is false for state nobody owns.
func (p *Package) FieldRole(v *types.Var, owner *types.TypeName) (string, bool) {
	if it, ok := p.Decl(v).Has(string(directive.Control)); ok {
		return it.Role, true
	}
	if owner != nil {
		if it, ok := p.Decl(owner).Has(string(directive.Control)); ok {
			return it.Role, true
		}
	}
	return "", false
}

// Origin maps an object of a generic instantiation to its origin.
func Origin(obj types.Object) types.Object {
	switch o := obj.(type) {
	case *types.Func:
		return o.Origin()
	case *types.Var:
		return o.Origin()
	}
	return obj
}

// ImportedParamFlows returns what another package's function does with its
// parameters, from the ParamFlows fact its package exported; nil when
// unknown.
func (p *Package) ImportedParamFlows(fn *types.Func) []int {
	fn = fn.Origin()
	if fn.Pkg() == nil || fn.Pkg() == p.Pass.Pkg {
		return nil
	}
	var f facts.ParamFlows
	if p.Pass.ImportObjectFact(fn, &f) {
		return f.Flows
	}
	return nil
}
