package commits

import (
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/roots"
)

// The rule ids, also the diagnostics' categories.
const (
	RuleWithoutDrain = "commit-without-drain"
	RuleInline       = "inline-commit"
)

// visit summarises fn from its block states and, when report is set,
// records its findings: at each call reaching a commit, the obligation is
// discharged (drained), passed to fn's callers, or reported here; and a
// commit reached from a foreign root is reported as inline.
func (a *analysis) visit(fn *ssa.Function, report bool) *funcSummary {
	in := a.flow(fn)
	sum := &funcSummary{exit: a.exitState(fn, in)}
	self := funcHop(fn, a.p)
	passes := a.passesUp(fn)
	haveKey := map[int]bool{}
	haveRole := map[string]bool{}
	check := func(cs *callSite, e *effect, s state) {
		undrained, reaches := e.undrained, e.reaches
		if e.local != nil {
			if callee := a.sums[e.local]; callee != nil {
				undrained, reaches = callee.undrained, callee.reaches
			}
		}
		for _, r := range reaches {
			if !haveRole[r.role] {
				haveRole[r.role] = true
				sum.reaches = append(sum.reaches, r.via(self, cs.pos))
			}
			if report && e.inlineHere {
				a.checkInline(fn, cs, r)
			}
		}
		for _, u := range undrained {
			k := a.keyIdx[key{u.role, u.lock}]
			switch {
			case s[k] == good:
			case s[k] == entry && passes:
				if !haveKey[k] {
					haveKey[k] = true
					sum.undrained = append(sum.undrained, u.via(self, cs.pos))
				}
			case report && !a.runsForeign(fn, u.role):
				a.reportUndrained(fn, cs, u.via(self, cs.pos))
			}
		}
	}
	for _, b := range fn.Blocks {
		a.transfer(b, in[b.Index].clone(), check)
	}
	return sum
}

// passesUp reports whether fn hands an undischarged obligation to its
// callers instead of reporting it: functions whose context is inferred from
// their callers, and exported API (whose importers get the fact). Entries,
// callbacks, goroutine bodies and escaping functions report.
func (a *analysis) passesUp(fn *ssa.Function) bool {
	r := a.ctx.RootOf(fn)
	if r == nil {
		return true
	}
	return exportedAPI(fn) && (r.Kind == roots.KindUnknown || r.Kind == roots.KindDeclared)
}

// foreign reports whether code reached this way runs on a goroutine other
// than role's (unknown callers are not assumed foreign).
func foreign(r roots.Reach, role string) bool {
	return r.Root.Kind != roots.KindUnknown && r.Root.Role != role
}

// runsForeign reports whether fn can run on a goroutine foreign to role:
// then the inline-commit finding is the root cause, and a missing drain on
// that path is not reported as well.
func (a *analysis) runsForeign(fn *ssa.Function, role string) bool {
	for _, r := range a.ctx.Of(fn) {
		if foreign(r, role) {
			return true
		}
	}
	return false
}

// checkInline reports the commit r once per root foreign to r's role that
// reaches fn, with the chain from that root. The finding sits at the call
// that leaves the root's own code on the way to the commit (where the
// handoff to r's role belongs), not deep inside a helper the root shares
// with correct code: the same place whether the helper is inferred, a root
// of its own or in another package.
func (a *analysis) checkInline(fn *ssa.Function, cs *callSite, r path) {
	for _, reach := range a.ctx.Of(fn) {
		if !foreign(reach, r.role) {
			continue
		}
		pos := cs.pos
		if sites := reach.Sites(); len(sites) > 0 && sites[0].IsValid() {
			pos = sites[0]
		}
		names := append(reach.Names(a.p.Pass.Pkg), r.names()...)
		a.found = append(a.found, diag.Finding{
			Pos:      pos,
			Fallback: fn.Pos(),
			Rule:     RuleInline,
			Message: r.commit.name + " publishes " + r.role + " progress but runs inline on " + reach.Root.Describe() +
				": " + diag.Chain(names...) + "; hand the commit to " + r.role +
				"'s goroutine (post a request to its mailbox and wait with a bound) instead of committing here",
			Chain: append(reachHops(reach, a), a.pathHops(r.via(funcHop(fn, a.p), cs.pos))...),
		})
	}
}

// reportUndrained reports the obligation u, which fn can neither discharge
// nor pass on.
func (a *analysis) reportUndrained(fn *ssa.Function, cs *callSite, u path) {
	when := "before it"
	if u.lock != "" {
		when = "after " + u.lockName + " is taken"
	}
	a.found = append(a.found, diag.Finding{
		Pos:      cs.pos,
		Fallback: fn.Pos(),
		Rule:     RuleWithoutDrain,
		Message: "commit " + u.commit.name + " (publishes " + u.role + " progress) can run without a drain of " +
			u.role + "'s mailbox " + when + ": " + diag.Chain(u.names()...),
		Chain: a.pathHops(u),
	})
}

// pathHops renders a path's known call sites as related information.
func (a *analysis) pathHops(u path) []diag.Hop {
	var hops []diag.Hop
	for i, site := range u.sites {
		if site.IsValid() && i+1 < len(u.chain) {
			hops = append(hops, diag.Hop{Pos: site, What: u.chain[i].name + " calls " + u.chain[i+1].name})
		}
	}
	return hops
}

func reachHops(r roots.Reach, a *analysis) []diag.Hop {
	names := r.Names(a.p.Pass.Pkg)
	hops := []diag.Hop{}
	if r.Root.Pos.IsValid() {
		hops = append(hops, diag.Hop{Pos: r.Root.Pos, What: names[0] + " starts on " + r.Root.Describe()})
	}
	for i, site := range r.Sites() {
		if site != token.NoPos && i+1 < len(names) {
			hops = append(hops, diag.Hop{Pos: site, What: names[i] + " calls " + names[i+1]})
		}
	}
	return hops
}
