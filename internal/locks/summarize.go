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
		infos:          map[*ssa.Function]*funcInfo{},
		imported:       map[*ssa.Function]*funcInfo{},
		classVars:      map[string]*types.Var{},
		subVars:        map[string]*types.Var{},
		treeSteps:      map[string][]treeStep{},
		closureEntry:   map[*ssa.Function]*State{},
		testStarts:     map[*ssa.Function]*testRun{},
		testSteps:      map[*ssa.Function]*testStep{},
		locals:         map[string]bool{},
		specials:       map[specKey]*funcInfo{},
		specializing:   map[*ssa.Function]bool{},
		tested:         map[*ssa.Function][]input{},
		guards:         map[*types.Var]*guard{},
		annotatedLocks: map[string]bool{},
		guardUses:      map[*types.Var]*guardUse{},
		pureWrappers:   map[*types.Named]bool{},
		tryWrappers:    map[*ssa.Function]tryLockOf{},
		impls:          map[implKey][]*ssa.Function{},
		escaping:       map[*ssa.Function]bool{},
		guardFound:     map[guardKey]int{},
	}
	if !e.hasLockWork() {
		return &Summary{}
	}
	e.selfBound = e.scanSelfBound()
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
	e.reportInferredGuards()
	e.checkDeclarations()
	e.dispatchEdges()
	e.reportCycles()
	e.reportTreeInversions()
	e.exportFacts()
	return &Summary{findings: e.findings}
}

// A closure run in place is checked under its callers' states: the join
// of the states at its call sites (a deferred one: at each return, where
// its defer runs), with its parameters bound to the arguments and its free
// variables to the bindings. A closure passed to a call (not go or defer)
// probably runs now but may be kept (the contract's assumption): the
// caller's locks at that call are lent to it, which satisfies guards and
// nothing else. A closure that escapes otherwise (stored, returned, started
// as a goroutine) starts with nothing held.

// recordClosureEntry handles the closures whose entry is known where they
// are created: range-over-func bodies (run now, under the caller's locks)
// and closures passed to a call (lent the caller's locks). It marks the
// escaping ones.
func (e *engine) recordClosureEntry(parent *ssa.Function, mc *ssa.MakeClosure, s State) {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok || e.boundMethod(fn) != nil || e.ctx.RootOf(fn) != nil || e.ctx.Escapes(fn) {
		return
	}
	if fn.Synthetic == "range-over-func yield" {
		e.joinClosureEntry(fn, intoClosureState(parent, s, mc.Bindings, nil, false))
		return
	}
	lent := false
	for _, ref := range *mc.Referrers() {
		switch r := ref.(type) {
		case *ssa.Call:
			lent = lent || r.Call.Value != mc
		case *ssa.Defer:
			if r.Call.Value != mc {
				e.escaping[fn] = true
			}
		case *ssa.DebugRef:
		default:
			e.escaping[fn] = true
		}
	}
	if lent && !e.escaping[fn] {
		e.joinClosureEntry(fn, intoClosureState(parent, s, mc.Bindings, nil, true))
	}
}

// recordClosureCall joins the state at a call of a closure in place
// (called, or run by a defer) into the closure's entry.
func (e *engine) recordClosureCall(parent *ssa.Function, call *ssa.CallCommon, s State) {
	var fn *ssa.Function
	var binds []ssa.Value
	switch v := call.Value.(type) {
	case *ssa.MakeClosure:
		fn, _ = v.Fn.(*ssa.Function)
		binds = v.Bindings
	case *ssa.Function:
		// A function literal without free variables: no MakeClosure, so
		// its other uses are checked here.
		if v.Parent() == nil || !calledOnly(v) {
			return
		}
		fn = v
	}
	if fn == nil || e.escaping[fn] || e.boundMethod(fn) != nil || e.ctx.RootOf(fn) != nil || e.ctx.Escapes(fn) {
		return
	}
	e.joinClosureEntry(fn, intoClosureState(parent, s, binds, call.Args, false))
}

// calledOnly reports whether every use of fn calls it (or defers it).
func calledOnly(fn *ssa.Function) bool {
	refs := fn.Referrers()
	if refs == nil {
		return false
	}
	for _, ref := range *refs {
		switch r := ref.(type) {
		case *ssa.Call:
			if r.Call.Value != fn {
				return false
			}
		case *ssa.Defer:
			if r.Call.Value != fn {
				return false
			}
		case *ssa.DebugRef:
		default:
			return false
		}
	}
	return true
}

func (e *engine) joinClosureEntry(fn *ssa.Function, entry State) {
	if prev := e.closureEntry[fn]; prev != nil {
		entry = join([]State{*prev, entry}, []bool{false, false})
	}
	e.closureEntry[fn] = &entry
}

// intoClosureState translates the caller's holds into the closure's
// terms: free variables fN, parameters pN, also inside index keys;
// paths it cannot express are outer paths (objects.IntoClosure).
func intoClosureState(parent *ssa.Function, s State, binds, args []ssa.Value, lent bool) State {
	bindPaths, argPaths := pathsOf(parent, binds), pathsOf(parent, args)
	var entry State
	for _, h := range s.holds {
		h.Path = objects.IntoClosure(h.Path, bindPaths, argPaths)
		if lent {
			h.Maybe, h.Lent = true, true
		}
		entry = entry.with(h)
	}
	return entry
}
