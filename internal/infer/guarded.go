package infer

import (
	"fmt"
	"go/types"
	"math"
	"sort"
	"strings"

	"github.com/confinelint/confinelint/internal/objects"
)

// Thresholds of the guardedby inference: the lock must be held at two
// sites at least, at three quarters of them, and at one write.
const (
	minGuarded   = 2
	guardedShare = 0.75
	// baseRate is the share of sites a lock would cover by chance in
	// the z score that ranks suggestions (Engler et al.'s statistic).
	baseRate = 0.5
)

// guardedBy proposes //confined:guardedby for fields and package vars
// accessed with one lock held at nearly every site.
func (s *state) guardedBy() []Suggestion {
	var out []Suggestion
	for _, group := range s.byVar() {
		v := group[0].v
		node := s.decls[v]
		if node == nil || s.annotated(v) || len(group) < minGuarded {
			continue
		}
		held, local := map[string]int{}, map[string]int{}
		writes := map[string]bool{}
		for _, st := range group {
			for name, h := range s.guards(st) {
				held[name]++
				if h.local {
					local[name]++
				}
				writes[name] = writes[name] || st.write
			}
		}
		lock, k := best(held, local)
		n := len(group)
		if k < minGuarded || float64(k) < guardedShare*float64(n) || !writes[lock] {
			continue
		}
		var deviants []Site
		for _, st := range group {
			if _, ok := s.guards(st)[lock]; !ok {
				deviants = append(deviants, s.describe(st))
			}
		}
		evidence := fmt.Sprintf("%s is held at %d of %d accesses", lock, k, n)
		if t := s.unguardedInTests(v, lock); t > 0 {
			evidence += fmt.Sprintf(" (and not at %d in tests, not counted)", t)
		}
		subject := fieldName(v, group[0].owner)
		out = append(out, Suggestion{
			Rule: "suggest-guardedby", Pos: v.Pos(), Node: node, Directive: "guardedby " + lock, Subject: subject,
			Evidence: evidence,
			Score:    zScore(k, n), Deviants: deviants,
		})
	}
	return out
}

// guards returns the locks held at st that a guardedby on its field could
// name, by that name: a lock in the object holding the field ("mu",
// "state.mu"), or a package-level lock ("mu"). A write needs the lock
// held exclusively.
func (s *state) guards(st site) map[string]hold {
	if s.globals == nil {
		s.globals = s.globalLocks()
	}
	out := map[string]hold{}
	for path, h := range st.held {
		if st.write && !h.exclusive {
			continue
		}
		if g, ok := s.globals[path]; ok {
			out[g.Name()] = h
			continue
		}
		if st.owner == nil {
			continue
		}
		if rest, ok := strings.CutPrefix(path, st.obj+"."); ok && !strings.ContainsAny(rest, "[") {
			out[rest] = h
		}
	}
	return out
}

// unguardedInTests counts the accesses to v in test files without lock.
func (s *state) unguardedInTests(v *types.Var, lock string) int {
	n := 0
	for _, st := range s.testSites {
		if _, ok := s.guards(st)[lock]; st.v == v && !ok {
			n++
		}
	}
	return n
}

// globalLocks maps the paths of the package's lock vars to them.
func (s *state) globalLocks() map[string]*types.Var {
	out := map[string]*types.Var{}
	scope := s.p.Pass.Pkg.Scope()
	for _, name := range scope.Names() {
		if v, ok := scope.Lookup(name).(*types.Var); ok {
			out[objects.GlobalPath(v)] = v
		}
	}
	return out
}

// byVar groups the sites by field or var, in source order of the
// declarations.
func (s *state) byVar() [][]site {
	index := map[*types.Var]int{}
	var groups [][]site
	for _, st := range s.sites {
		i, ok := index[st.v]
		if !ok {
			i = len(groups)
			index[st.v] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], st)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i][0].v.Pos() < groups[j][0].v.Pos() })
	return groups
}

// best returns the lock held most often, ties going to the one taken by
// the accessing function itself more often, then to the first name.
func best(held, local map[string]int) (string, int) {
	var names []string
	for name := range held {
		names = append(names, name)
	}
	sort.Strings(names)
	top := ""
	for _, name := range names {
		if top == "" || held[name] > held[top] || held[name] == held[top] && local[name] > local[top] {
			top = name
		}
	}
	return top, held[top]
}

// zScore ranks k agreeing sites of n: how far k/n lies above baseRate in
// standard deviations, so that 19 of 20 outranks 2 of 2.
func zScore(k, n int) float64 {
	return (float64(k)/float64(n) - baseRate) / math.Sqrt(baseRate*(1-baseRate)/float64(n))
}

// describe renders a site for messages and related information.
func (s *state) describe(st site) Site {
	verb := "read"
	if st.write {
		verb = "written"
	}
	return Site{Pos: st.pos, What: st.what + " " + verb + " in " + s.name(st.fn)}
}
