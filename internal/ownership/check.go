package ownership

import (
	"fmt"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// touch is an access as one function sees it: made by the function itself
// (path empty) or by a summarised callee, path naming the functions from
// that callee to the one that makes it.
type touch struct {
	a    access
	path []*ssa.Function
}

// touches returns fn's own accesses followed by those of the undeclared
// exported or escaping functions it calls, at the call.
func (e *engine) touches(fn *ssa.Function) []touch {
	var out []touch
	for _, a := range e.direct[fn] {
		out = append(out, touch{a: a})
	}
	for _, lc := range e.localCalls[fn] {
		if lc.callee == fn || e.unknownRoot(lc.callee) == nil {
			continue
		}
		for _, t := range e.summary(lc.callee) {
			t.a.pos = lc.pos
			out = append(out, t)
		}
	}
	return e.merge(out)
}

// merge keeps one touch per state and source line, a write over a read:
// c.n++ and c.s = append(c.s, x) load and store the same field and are
// one write for the user.
func (e *engine) merge(ts []touch) []touch {
	type lineKey struct {
		file  string
		line  int
		state string
	}
	index := map[lineKey]int{}
	var out []touch
	for _, t := range ts {
		pos := e.p.Pass.Fset.Position(t.a.pos)
		k := lineKey{pos.Filename, pos.Line, t.a.state}
		if i, ok := index[k]; ok {
			if t.a.kind > out[i].a.kind {
				out[i] = t
			}
			continue
		}
		index[k] = len(out)
		out = append(out, t)
	}
	return out
}

// summary is what an undeclared exported or escaping function reaches:
// one touch per state and role, a write preferred, path from fn itself.
func (e *engine) summary(fn *ssa.Function) []touch {
	if s, ok := e.sums[fn]; ok {
		return s
	}
	r := e.unknownRoot(fn)
	if r == nil || e.summing[fn] {
		return nil // a recursive cycle of exported functions: seen at its start
	}
	e.summing[fn] = true
	var out []touch
	index := map[string]int{}
	for _, rc := range e.byRoot[r] {
		for _, t := range e.touches(rc.Func()) {
			t.path = append(rc.Chain(), t.path...)
			k := t.a.key + "@" + t.a.role
			if i, ok := index[k]; ok {
				if t.a.kind == write && out[i].a.kind == read {
					out[i] = t
				}
				continue
			}
			index[k] = len(out)
			out = append(out, t)
		}
	}
	e.sums[fn] = out
	return out
}

// checkAccesses applies rules 1 and 8: every access on every context that
// reaches its function, reported once, on the first context that may not
// touch it.
func (e *engine) checkAccesses() {
	for _, fn := range e.p.Funcs {
		for _, t := range e.touches(fn) {
			if t.a.from != nil && e.loadReported(*t.a.from) {
				continue // the read of the state is the finding
			}
			for _, rc := range e.reach[fn] {
				if rule := judge(rc.Root, t.a.role); rule != "" {
					e.reportAccess(rule, fn, rc, t)
					break
				}
			}
		}
	}
}

// judge names the rule an access of role's state breaks on root, or "".
func judge(r *roots.Root, role string) string {
	switch r.Kind {
	case roots.KindEntry, roots.KindDeclared, roots.KindSerialized:
		if orDefault(r.Role) != role {
			return "foreign-access"
		}
	case roots.KindGo, roots.KindAsync, roots.KindInterface, roots.KindCallback:
		return "foreign-access"
	case roots.KindAny:
		return "any-touches-state"
	}
	return ""
}

func (e *engine) reportAccess(rule string, fn *ssa.Function, rc roots.Reach, t touch) {
	prefix := rc.Chain()
	chain := e.chain(prefix, t)
	var msg string
	if rule == "any-touches-state" {
		msg = fmt.Sprintf("%s is //confined:any but %s, confined to %s, is %s in it: %s", rc.Root.Via, t.a.state, t.a.role, t.a.kind.verb(), chain)
	} else {
		msg = fmt.Sprintf("%s is confined to %s but %s on %s: %s", t.a.state, t.a.role, t.a.kind.verb(), rc.Root.Describe(), chain)
	}
	hops := []diag.Hop{{Pos: rc.Root.Pos, What: "the context starts here: " + rc.Root.Describe()}}
	if t.a.from != nil {
		hops = append(hops, e.loadHop(*t.a.from)...)
	}
	for i, site := range rc.Sites() {
		hops = append(hops, diag.Hop{Pos: site, What: e.name(prefix[i]) + " calls " + e.name(prefix[i+1])})
	}
	e.findings = append(e.findings, diag.Finding{Pos: t.a.pos, Fallback: fn.Pos(), Rule: rule, Message: msg, Chain: hops})
}

// chain renders "root -> ... -> fn -> callee... -> state" for messages.
func (e *engine) chain(prefix []*ssa.Function, t touch) string {
	var names []string
	for _, f := range prefix {
		names = append(names, e.name(f))
	}
	for _, f := range t.path {
		names = append(names, e.name(f))
	}
	names = append(names, t.a.via...)
	if t.a.last != "" {
		return diag.Chain(append(names, t.a.last)...)
	}
	names = append(names, t.a.state)
	return diag.Chain(names...)
}

func (e *engine) name(fn *ssa.Function) string { return program.FuncName(fn, e.p.Pass.Pkg) }
