package locks

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// Summary is the lock result for one package.
type Summary struct {
	findings []diag.Finding
}

// Summarize computes the package's lock summary and exports its facts.
// Packages with no lock operation, no lock directive and no call to a
// function with a lock effect are skipped after one linear scan.
func Summarize(p *program.Package, ctx *roots.Contexts) *Summary {
	e := &engine{
		p: p, ctx: ctx, objs: ctx.Objects,
		infos:        map[*ssa.Function]*funcInfo{},
		imported:     map[*ssa.Function]*funcInfo{},
		classVars:    map[string]*types.Var{},
		closureEntry: map[*ssa.Function]*State{},
		specials:     map[specKey]*funcInfo{},
		specializing: map[*ssa.Function]bool{},
		tested:       map[*ssa.Function][]int{},
		guards:       map[*types.Var]*guard{},
		impls:        map[*types.Func][]*ssa.Function{},
	}
	if !e.hasLockWork() {
		return &Summary{}
	}
	e.fieldFuncs = e.scanFieldFuncs()
	e.scanAliases()
	for _, fn := range p.Funcs {
		e.infos[fn] = &funcInfo{}
	}
	// Summaries bottom-up: callees before callers; inside a recursive
	// cycle a callee not yet summarised counts as empty, then the cycle
	// is walked once more with the first round's summaries.
	for _, scc := range e.sccs() {
		rounds := 1
		if len(scc) > 1 || e.selfRecursive(scc[0]) {
			rounds = 2
		}
		for range rounds {
			for _, fn := range scc {
				e.walk(fn, e.infos[fn], e.declaredEntry(fn), false)
			}
		}
	}
	// Specializations made while summaries were incomplete are redone.
	clear(e.specials)
	// Checks top-down in source order, so that a closure is checked after
	// its parent recorded the state it is created in.
	for _, fn := range p.Funcs {
		entry := e.declaredEntry(fn)
		if ce := e.closureEntry[fn]; ce != nil {
			entry = *ce
		}
		e.walk(fn, &funcInfo{}, entry, true)
	}
	e.checkDeclarations()
	e.reportCycles()
	e.exportFacts()
	return &Summary{findings: e.findings}
}

// recordClosureEntry keeps the state a closure is created in when the
// closure is only called synchronously right here (called, or passed to a
// call that is not a go statement or a defer), translated to the
// closure's free variables. Other closures start with nothing held.
func (e *engine) recordClosureEntry(parent *ssa.Function, mc *ssa.MakeClosure, s State) {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok || e.boundMethod(fn) != nil || e.ctx.RootOf(fn) != nil || e.ctx.Escapes(fn) {
		return
	}
	// Called right here, or a range-over-func body: runs now, under the
	// caller's locks. Passed to another call: it probably runs now (the
	// contract's assumption), but may be kept for later, so the caller's
	// locks are only maybe-held in it: enough to silence guard findings,
	// never a double lock or an edge.
	direct := fn.Synthetic == "range-over-func yield"
	if !direct {
		direct = true
		for _, ref := range *mc.Referrers() {
			switch r := ref.(type) {
			case *ssa.Call:
				if r.Call.Value != mc {
					direct = false
				}
			case *ssa.DebugRef:
			default:
				return
			}
		}
	}
	binds := make([]string, len(mc.Bindings))
	for i, b := range mc.Bindings {
		binds[i] = pathOf(parent, b)
	}
	var entry State
	for _, h := range s.holds {
		h.Path = objects.IntoClosure(h.Path, binds)
		h.Maybe = h.Maybe || !direct
		entry = entry.with(h)
	}
	if prev := e.closureEntry[fn]; prev != nil {
		entry = join([]State{*prev, entry}, []bool{false, false})
	}
	e.closureEntry[fn] = &entry
}
