// Package commits is the summary engine behind the revokepath analyzer:
// drain-before-commit obligations along every path from a root, and
// commits run inline on a foreign goroutine.
//
// The analysis is a typestate over each function's SSA blocks, per
// obligation key (role, lock class): "a drain of role ran on every path
// since the last acquisition of lock" (see flow.go). Functions are
// summarised (the obligations they pass to callers, the commits they reach,
// their state at return) and summaries of exported functions travel to
// importers as facts.CommitObligation.
package commits

import (
	"fmt"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/locks"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// Summary is the commit result for one package.
type Summary struct {
	// Findings are the package's commit-without-drain and inline-commit
	// findings, sorted by position.
	Findings []diag.Finding
	// Exported lists the facts exported, in source order (for tests and
	// debugging; importers read the facts themselves).
	Exported []Exported
}

// Exported is one exported facts.CommitObligation.
type Exported struct {
	Func *types.Func
	Fact *facts.CommitObligation
}

// funcSummary is what callers of a function of this package see.
type funcSummary struct {
	undrained []path // one per key, passed to callers (only if the function passes up)
	reaches   []path // one per role
	exit      state  // per key at return; nil if it never returns
}

// signature is a canonical form for detecting the fixpoint.
func (s *funcSummary) signature() string {
	var b strings.Builder
	fmt.Fprint(&b, []uint8(s.exit))
	for _, u := range s.undrained {
		b.WriteString("|u " + u.role + " " + u.lock)
	}
	for _, r := range s.reaches {
		b.WriteString("|r " + r.role)
	}
	return b.String()
}

type key struct{ role, lock string }

type analysis struct {
	p      *program.Package
	ctx    *roots.Contexts
	keys   []key
	keyIdx map[key]int
	byRole map[string][]int // key indexes of a role
	byLock map[string][]int // key indexes of a lock class
	sites  map[ssa.Instruction]*callSite
	sums   map[*ssa.Function]*funcSummary
	found  []diag.Finding
}

func (a *analysis) addKey(role, lock string) {
	k := key{role, lock}
	if _, ok := a.keyIdx[k]; ok {
		return
	}
	a.keyIdx[k] = len(a.keys)
	a.byRole[role] = append(a.byRole[role], len(a.keys))
	if lock != "" {
		a.byLock[lock] = append(a.byLock[lock], len(a.keys))
	}
	a.keys = append(a.keys, k)
}

// maxRounds bounds the interprocedural fixpoint; recursion through commit
// paths is rare and each round only lowers states.
const maxRounds = 8

// Summarize computes the package's commit obligations and exports facts.
// It does its own small lock tracking (only of the locks commits require),
// so it does not depend on the lock engine's result.
func Summarize(p *program.Package, ctx *roots.Contexts, _ *locks.Summary) *Summary {
	a := &analysis{
		p: p, ctx: ctx,
		keyIdx: map[key]int{}, byRole: map[string][]int{}, byLock: map[string][]int{},
		sites: map[ssa.Instruction]*callSite{}, sums: map[*ssa.Function]*funcSummary{},
	}
	drains := checkDrains(p, ctx)
	if !a.mayCommit() {
		return &Summary{Findings: drains}
	}
	var funcs []*ssa.Function
	for _, fn := range p.Funcs {
		if len(fn.Blocks) > 0 {
			a.scanSites(fn)
			funcs = append(funcs, fn)
		}
	}
	if len(a.keys) == 0 && !a.anyReach() {
		return &Summary{Findings: drains} // no drain obligations here: stay cheap
	}
	order := a.calleesFirst(funcs)
	for round := 0; round < maxRounds; round++ {
		changed := false
		for _, fn := range order {
			sum := a.visit(fn, false)
			if old := a.sums[fn]; old == nil || old.signature() != sum.signature() {
				changed = true
			}
			a.sums[fn] = sum
		}
		if !changed {
			break
		}
	}
	for _, fn := range funcs {
		a.sums[fn] = a.visit(fn, true)
	}
	exported := a.exportFacts(funcs)
	a.found = append(a.found, drains...)
	sort.SliceStable(a.found, func(i, j int) bool { return a.found[i].Pos < a.found[j].Pos })
	return &Summary{Findings: a.found, Exported: exported}
}

// mayCommit reports whether a commit can be reached from the package: one
// of its functions is declared //confined:commit, or it calls an imported
// function that is one or that carries a commit obligation. Without, every
// obligation and path is empty (as the check after scanSites would find,
// but scanSites names every call on the way).
func (a *analysis) mayCommit() bool {
	isCommit := func(d *facts.Decl) bool {
		_, ok := d.Has(string(directive.Commit))
		return ok
	}
	for _, fn := range a.p.Funcs {
		if isCommit(a.p.FuncDecl(fn)) {
			return true
		}
		for _, blk := range fn.Blocks {
			for _, instr := range blk.Instrs {
				call, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				static := call.Common().StaticCallee()
				if static == nil || a.isLocal(static) {
					continue
				}
				obj, ok := static.Object().(*types.Func)
				if !ok || obj.Pkg() == a.p.Pass.Pkg {
					continue
				}
				var fact facts.CommitObligation
				if isCommit(a.p.Decl(obj)) || a.p.Pass.ImportObjectFact(obj.Origin(), &fact) {
					return true
				}
			}
		}
	}
	return false
}

// anyReach reports whether some call reaches a commit (a commit that
// drains first creates no key but still matters for inline commits).
func (a *analysis) anyReach() bool {
	for _, cs := range a.sites {
		for _, e := range cs.effects {
			if len(e.reaches) > 0 {
				return true
			}
		}
	}
	return false
}

// calleesFirst orders funcs so that callees come before callers (outside
// of recursion), so most summaries are final after one round.
func (a *analysis) calleesFirst(funcs []*ssa.Function) []*ssa.Function {
	seen := map[*ssa.Function]bool{}
	var order []*ssa.Function
	var visit func(fn *ssa.Function)
	visit = func(fn *ssa.Function) {
		if seen[fn] || !a.p.FuncSet[fn] {
			return
		}
		seen[fn] = true
		for _, e := range a.ctx.Calls(fn) {
			visit(e.Callee)
		}
		if len(fn.Blocks) > 0 {
			order = append(order, fn)
		}
	}
	for _, fn := range funcs {
		visit(fn)
	}
	return order
}

// exportFacts publishes the summaries of exported functions for importers.
func (a *analysis) exportFacts(funcs []*ssa.Function) []Exported {
	var out []Exported
	for _, fn := range funcs {
		sum := a.sums[fn]
		if sum == nil || len(sum.reaches) == 0 || !exportedAPI(fn) || fn.Object().Pkg() != a.p.Pass.Pkg {
			continue
		}
		f := &facts.CommitObligation{}
		for _, u := range sum.undrained {
			f.Undrained = append(f.Undrained, u.toFact())
		}
		for _, r := range sum.reaches {
			f.Reaches = append(f.Reaches, r.toFact())
		}
		sort.SliceStable(f.Undrained, func(i, j int) bool {
			x, y := f.Undrained[i], f.Undrained[j]
			return x.Role < y.Role || x.Role == y.Role && x.Lock < y.Lock
		})
		sort.SliceStable(f.Reaches, func(i, j int) bool { return f.Reaches[i].Role < f.Reaches[j].Role })
		a.p.Pass.ExportObjectFact(fn.Object(), f)
		out = append(out, Exported{Func: fn.Object().(*types.Func), Fact: f})
	}
	return out
}

// exportedAPI reports whether fn is a package-level exported function or
// method: its callers may be in other packages.
func exportedAPI(fn *ssa.Function) bool {
	return fn.Parent() == nil && fn.Object() != nil && fn.Object().Exported()
}
