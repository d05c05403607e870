package commits

import (
	"go/token"
	"go/types"
	"sort"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// effect is what one callee at a call site means for the typestate: checks
// against the state before the call (undrained, reaches), then changes to
// it (drains, acquires, and a local callee's exit state).
type effect struct {
	callee    hop
	drains    []string // roles whose mailbox the call drains
	acquires  []string // lock classes the call takes
	undrained []path   // commits reached without a drain inside; chains start at the callee
	reaches   []path   // one commit per role the call reaches
	// inlineHere says the inline-commit check belongs at this call: the
	// callee is a commit, a foreign package's function, or a root of its
	// own (roots stop propagating there, so its body is not checked
	// against this caller's goroutine).
	inlineHere bool
	local      *ssa.Function // a summarised callee of this package, or nil
}

// callSite is one call instruction with its effects, in order: the static
// callee first, then the function values it is passed (run synchronously,
// after whatever the callee did first, e.g. a withLock helper).
type callSite struct {
	pos     token.Pos
	effects []effect
}

// scanSites records the call sites of fn that matter: lock operations on
// any lock, drains, commits, calls to summarised functions of this package
// and to imported functions with commit facts.
func (a *analysis) scanSites(fn *ssa.Function) {
	locals := map[token.Pos][]*ssa.Function{}
	for _, e := range a.ctx.Calls(fn) {
		locals[e.Site] = append(locals[e.Site], e.Callee)
	}
	for _, blk := range fn.Blocks {
		for _, instr := range blk.Instrs {
			call, ok := instr.(ssa.CallInstruction)
			if !ok {
				continue
			}
			if _, isGo := instr.(*ssa.Go); isGo {
				continue // the target is a root of its own, not a call on this path
			}
			cs := &callSite{pos: instr.Pos()}
			common := call.Common()
			static := common.StaticCallee()
			if op, lk := lockop.Classify(common); op.Acquires() {
				if class := lockop.ClassKey(lockop.ClassOf(lk)); class != "" {
					cs.effects = append(cs.effects, effect{acquires: []string{class}})
				}
			} else if static != nil && !a.isLocal(static) {
				if e, ok := a.importedEffect(static); ok {
					cs.effects = append(cs.effects, e)
				}
			}
			var targets []*ssa.Function
			if instr.Pos().IsValid() {
				targets = locals[instr.Pos()]
			} else if static != nil && a.isLocal(static) {
				if !a.p.FuncSet[static] {
					static = static.Origin() // summaries are keyed by source function
				}
				targets = []*ssa.Function{static}
			}
			for _, callee := range targets {
				cs.effects = append(cs.effects, a.localEffect(callee))
			}
			if len(cs.effects) > 0 {
				a.sites[instr] = cs
			}
		}
	}
}

func (a *analysis) isLocal(fn *ssa.Function) bool {
	if a.p.FuncSet[fn] {
		return true
	}
	o := fn.Origin()
	return o != nil && a.p.FuncSet[o]
}

// localEffect is a call of fn of this package: its declaration when it is a
// drain or a commit, otherwise its summary (filled in as summaries form).
func (a *analysis) localEffect(fn *ssa.Function) effect {
	d := a.p.FuncDecl(fn)
	if e, ok := a.declEffect(d, funcHop(fn, a.p)); ok {
		return e
	}
	if _, ok := roots.RunsAs(d); ok {
		// An entry or serialized function runs as its role whoever calls
		// it: the commits below it are judged on its own root.
		return effect{callee: funcHop(fn, a.p)}
	}
	return effect{callee: funcHop(fn, a.p), local: fn, inlineHere: a.ctx.RootOf(fn) != nil}
}

// importedEffect is a call of another package's function: its declaration
// (drain, commit, acquires) or its CommitObligation fact.
func (a *analysis) importedEffect(fn *ssa.Function) (effect, bool) {
	obj, ok := fn.Object().(*types.Func)
	if !ok || obj.Pkg() == a.p.Pass.Pkg {
		return effect{}, false // a wrapper of our own method: the local edge covers it
	}
	h := hop{program.ObjName(obj, a.p.Pass.Pkg), program.ObjName(obj, nil)}
	d := a.p.Decl(obj)
	if e, ok := a.declEffect(d, h); ok {
		return e, true
	}
	if _, ok := roots.RunsAs(d); ok {
		return effect{}, false // as for a local entry: judged on its own root
	}
	e := effect{callee: h, inlineHere: true}
	for _, it := range items(d) {
		if (it.Verb == string(directive.Acquires) || it.Verb == string(directive.AcquiresShared)) && it.LockClass != "" {
			e.acquires = append(e.acquires, it.LockClass)
		}
	}
	var fact facts.CommitObligation
	if a.p.Pass.ImportObjectFact(obj.Origin(), &fact) {
		for _, c := range fact.Undrained {
			e.undrained = append(e.undrained, pathFromFact(c))
			a.addKey(c.Role, c.Lock)
		}
		for _, c := range fact.Reaches {
			e.reaches = append(e.reaches, pathFromFact(c))
		}
	}
	return e, len(e.acquires) > 0 || len(e.reaches) > 0
}

// declEffect is the effect of calling a declared drain or commit.
func (a *analysis) declEffect(d *facts.Decl, h hop) (effect, bool) {
	e := effect{callee: h}
	drain, isDrain := d.Has(string(directive.Drain))
	commit, isCommit := d.Has(string(directive.Commit))
	if isDrain {
		e.drains = []string{drain.Role}
	}
	if !isCommit {
		return e, isDrain
	}
	e.inlineHere = true
	base := path{role: commit.Role, commit: h, chain: []hop{h}}
	e.reaches = []path{base}
	if isDrain && drain.Role == commit.Role {
		return e, true // drains first: no obligation left for the caller
	}
	var locks []string
	for _, it := range items(d) {
		if (it.Verb == string(directive.Requires) || it.Verb == string(directive.RequiresShared)) && it.LockClass != "" {
			locks = append(locks, it.LockClass)
		}
	}
	sort.Strings(locks)
	if len(locks) == 0 {
		locks = []string{""}
	}
	for _, l := range locks {
		u := base
		u.lock = l
		if l != "" {
			u.lockName = lockShortName(l)
		}
		e.undrained = append(e.undrained, u)
		a.addKey(commit.Role, l)
	}
	return e, true
}

// items returns d's items; d is nil for undeclared objects.
func items(d *facts.Decl) []facts.DeclItem {
	if d == nil {
		return nil
	}
	return d.Items
}
