package locks

import (
	"cmp"
	"go/token"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/roots"
)

// Reporting cycles, one finding per problem, where the fix goes:
//
//   - every local edge that closes a cycle contributes that cycle (its
//     shortest way back); cycles over the same classes are one;
//   - a cycle of three or more locks is reported only when every edge is
//     certain (edge.must), a take on each turn of a loop counting as
//     certain (take.eachTurn): long cycles built from possible takes were
//     mostly paths no program runs, and a real one is all certain;
//   - a cycle whose every edge runs under one more exclusive lock (a
//     gate, gates.go) is not reported, nor one that meets at a read lock
//     read-locked on both sides that no writer can wait for
//     (readsides.go);
//   - a cycle that needs an edge seen only in test code is its own rule,
//     lock-order-test, reported at the test's acquisition; the cycles of
//     one lock a test holds (in one function, from one acquisition) are
//     one finding, whatever it takes under it: the fix is that hold;
//   - cycles sharing an edge, or a hold and the acquisition or call made
//     under it, are grouped: the local edge that closes the most cycles
//     is reported once, at its acquisition, naming how many it closes,
//     with the other cycles as related information; then the next,
//     until every cycle is covered. Ties go to the latest position,
//     then to the classes' names (two edges of one call), so the choice
//     depends only on the edges, not on the order packages or functions
//     are analysed in, nor on map iteration;
//   - every witness of a reported cycle is also where a //confined:ignore
//     silences it.

// cycle is one lock-order cycle: edges in order, each To the next From.
type cycle struct {
	edges []edge
	test  bool // needs an edge seen only in test code
}

// reportCycles reports the cycles that close in this package.
func (e *engine) reportCycles() {
	if len(e.edges) == 0 {
		return
	}
	var prod, tests []cycle
	for _, c := range e.cycles() {
		if c.test {
			if (e.concurrentWithTest(c) || e.nestedCycle(c)) && !e.unwrittenInTest(c) {
				tests = append(tests, c)
			}
		} else {
			prod = append(prod, c)
		}
	}
	e.reportGroups(prod, "lock-order")
	e.reportGroups(tests, "lock-order-test")
}

// cycles finds a cycle through each local edge that closes one.
func (e *engine) cycles() []cycle {
	g := e.graph()
	var out []cycle
	seen := map[string]bool{}
	for _, x := range e.cycleStarts() {
		if x.declared {
			continue
		}
		back := pathBetween(g, x)
		if back == nil || slices.ContainsFunc(back, func(b edge) bool { return b.declared }) {
			continue
		}
		c := cycle{edges: append([]edge{x}, back...)}
		// A cycle through a test's edge is kept once per test: whether
		// it can deadlock depends on what that test starts.
		key := c.classKey() + " " + c.testFn()
		if seen[key] {
			continue
		}
		seen[key] = true
		if c.long() && !c.certain() || e.gated(c) || e.unwrittenReadJoint(c.edges) || nestedInstances(c) {
			continue
		}
		c.test = slices.ContainsFunc(c.edges, func(b edge) bool { return b.test })
		out = append(out, c)
	}
	return out
}

// classKey names a cycle by its class pairs, whatever edge it starts at.
func (c cycle) classKey() string {
	names := make([]string, len(c.edges))
	for i, x := range c.edges {
		names[i] = x.From + ">" + x.To
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), " ")
}

// testFn names the function witnessing c's first test edge, "" when it
// has none.
func (c cycle) testFn() string {
	for _, x := range c.edges {
		if x.test {
			return x.Fn
		}
	}
	return ""
}

// long: three or more distinct locks.
func (c cycle) long() bool {
	classes := map[string]bool{}
	for _, x := range c.edges {
		classes[x.From] = true
	}
	return len(classes) >= 3
}

func (c cycle) certain() bool {
	for _, x := range c.edges {
		if !x.must {
			return false
		}
	}
	return true
}

// local reports whether x was witnessed in this package (it has positions).
func local(x edge) bool { return x.ToPos.IsValid() }

// reportGroups reports cycles grouped by the local edge they share.
func (e *engine) reportGroups(cycles []cycle, rule string) {
	left := cycles
	for len(left) > 0 {
		test := rule == "lock-order-test"
		at, ok := e.mostShared(left, test)
		if !ok {
			return
		}
		var group, rest []cycle
		for _, c := range left {
			if slices.ContainsFunc(c.edges, func(x edge) bool { return e.inGroup(x, at, test) }) {
				group = append(group, c)
			} else {
				rest = append(rest, c)
			}
		}
		e.reportGroup(at, group, rule)
		left = rest
	}
}

// groupKey is what cycles reported as one share: an edge, or for the
// test rule the test's hold (function and acquisition) they all need.
type groupKey struct {
	edge    edgeKey
	fn      string
	fromPos token.Pos
}

func (e *engine) groupOf(x edge, test bool) groupKey {
	if test && e.testHold(x) {
		return groupKey{edge: edgeKey{from: x.From, fromSub: x.FromSub}, fn: x.Fn, fromPos: x.FromPos}
	}
	return groupKey{edge: x.key()}
}

// inGroup reports whether x puts its cycle in at's group: the same group
// key, or, in production code, the same hold and the same acquisition
// or call made under it (a function that holds cc.mu and calls into a
// balancer that takes three other locks closes three cycles at that one
// call: one fix), test code other than a test's own hold included.
func (e *engine) inGroup(x, at edge, test bool) bool {
	if e.groupOf(x, test) == e.groupOf(at, test) {
		return true
	}
	sameSite := x.Fn == at.Fn && x.From == at.From && x.FromSub == at.FromSub && x.FromPos == at.FromPos && x.ToPos == at.ToPos
	ownHold := test && (e.testHold(x) || e.testHold(at))
	return sameSite && !ownHold && local(x) && !x.declared && !at.declared && x.handed == "" && at.handed == ""
}

// testHold reports whether x is a test's own hold: witnessed in a test
// function or a closure of one, not in a helper, fake or other code of the
// _test.go files, whose edges are grouped as production code's are.
func (e *engine) testHold(x edge) bool {
	if !x.test {
		return false
	}
	f := e.funcNamed(x.Fn)
	for f != nil && f.Parent() != nil {
		f = f.Parent()
	}
	return roots.TestFunc(e.p.Pass.Fset, f)
}

// mostShared picks the local edge that closes the most cycles (a test
// edge for the test rule), the latest acquisition among equals (as the
// second half of an inversion is usually the newer code).
func (e *engine) mostShared(cycles []cycle, wantTest bool) (edge, bool) {
	count := map[groupKey]int{}
	byKey := map[groupKey]edge{}
	for _, c := range cycles {
		for _, x := range c.edges {
			if local(x) && (!wantTest || x.test) {
				k := e.groupOf(x, wantTest)
				count[k]++
				if o, ok := byKey[k]; !ok || e.representsBetter(x, o, k) {
					byKey[k] = x
				}
			}
		}
	}
	if len(count) == 0 && wantTest {
		return e.mostShared(cycles, false)
	}
	var best edge
	found := false
	for k, n := range count {
		x := byKey[k]
		if nb := count[e.groupOf(best, wantTest)]; !found || n > nb || n == nb && later(x, best) {
			best, found = x, true
		}
	}
	return best, found
}

// representsBetter reports whether x rather than o stands for the group
// k they share: for an edge's key (test code keeps a witness per test
// function), the witness production code's rule keeps (betterThan), so
// that a reproduction is reported where the same code as a program is;
// for a test's hold, the latest acquisition.
func (e *engine) representsBetter(x, o edge, k groupKey) bool {
	if k.fn == "" {
		return x.betterThan(o)
	}
	return later(x, o)
}

// later orders edges by acquisition, then held position, then, for two
// edges of one site (a call under a lock reaching two others), by their
// classes and witness: a total order, so that the group reported does not
// depend on map iteration.
func later(x, y edge) bool {
	if x.ToPos != y.ToPos {
		return x.ToPos > y.ToPos
	}
	if x.FromPos != y.FromPos {
		return x.FromPos > y.FromPos
	}
	return cmp.Or(strings.Compare(x.From, y.From), strings.Compare(x.To, y.To), strings.Compare(x.FromSub, y.FromSub),
		strings.Compare(x.ToSub, y.ToSub), strings.Compare(x.Fn, y.Fn)) > 0
}

// reportGroup reports the cycles of group at edge at, the first (by its
// other edges' order) in the message, the others as related information.
func (e *engine) reportGroup(at edge, group []cycle, rule string) {
	sort.SliceStable(group, func(i, j int) bool { return len(group[i].edges) < len(group[j].edges) })
	// A cycle kept once per test (cycles) is still one cycle here.
	seen := map[string]bool{}
	group = slices.DeleteFunc(group, func(c cycle) bool {
		k := c.classKey()
		dup := seen[k]
		seen[k] = true
		return dup
	})
	test := rule == "lock-order-test"
	// Each cycle rotated to end with its edge of the group.
	rotated := func(c cycle) []edge {
		i := slices.IndexFunc(c.edges, func(x edge) bool { return e.inGroup(x, at, test) })
		return rotate(c, c.edges[i])
	}
	if i := slices.IndexFunc(group, func(c cycle) bool {
		return slices.ContainsFunc(c.edges, func(x edge) bool { return x.key() == at.key() })
	}); i > 0 {
		group[0], group[i] = group[i], group[0] // the message names at's own cycle
	}
	first := rotate(group[0], at)
	var parts []string
	var hops []diag.Hop
	for _, b := range first[:len(first)-1] {
		parts = append(parts, b.FromName+" then "+b.ToName+" "+b.Witness)
		hops = append(hops, witnessHops(b)...)
	}
	msg := "lock order inversion: " + strings.Join(parts, ", ") + " but " + at.FromName + " then " + at.ToName + " " + at.Witness + e.readOnlyNote(first)
	if rule == "lock-order-test" {
		msg = "lock order inversion in test code: " + strings.TrimPrefix(msg, "lock order inversion: ")
	}
	if len(group) > 1 && test && e.testHold(at) {
		msg += "; the test's hold of " + at.FromName + " closes " + strconv.Itoa(len(group)) + " lock-order cycles"
	} else if len(group) > 1 {
		msg += "; this acquisition closes " + strconv.Itoa(len(group)) + " lock-order cycles"
		for _, c := range group[1:] {
			hops = append(hops, diag.Hop{Pos: at.ToPos, What: "also closes: " + cycleText(rotated(c))})
		}
	}
	hops = append(hops, witnessHops(at)...)
	var also []token.Pos
	for _, c := range group {
		for _, x := range c.edges {
			if local(x) && x.key() != at.key() {
				also = append(also, x.ToPos, x.FromPos)
			}
		}
	}
	e.findAlso(at.ToPos, rule, msg, also, hops...)
}

// rotate orders c's edges to end with at.
func rotate(c cycle, at edge) []edge {
	i := slices.IndexFunc(c.edges, func(x edge) bool { return x.key() == at.key() })
	if i < 0 {
		return c.edges
	}
	return append(slices.Clone(c.edges[i+1:]), c.edges[:i+1]...)
}

// cycleText renders a cycle as "A then B (witness), B then A (witness)".
func cycleText(es []edge) string {
	var parts []string
	for _, x := range es {
		parts = append(parts, x.FromName+" then "+x.ToName+" "+x.Witness)
	}
	return strings.Join(parts, ", ")
}

// sameLock reports whether two refinements of one class can be the same
// lock: unknown ("") can be anything.
func sameLock(a, b string) bool { return a == "" || b == "" || a == b }

// pathBetween finds a shortest chain of edges from x.To back to x.From,
// through locks that can be the same where consecutive edges meet (the
// refinements, Sub, of a class under two different value fields, as
// c.in and c.out, never meet).
func pathBetween(g map[string][]edge, x edge) []edge {
	type node struct{ class, sub string }
	type step struct {
		prev node
		via  edge
	}
	start := node{x.To, x.ToSub}
	prev := map[node]step{}
	seen := map[node]bool{start: true}
	queue := []node{start}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, y := range g[cur.class] {
			if !sameLock(y.FromSub, cur.sub) {
				continue
			}
			if y.To == x.From && sameLock(y.ToSub, x.FromSub) {
				out := []edge{y}
				for at := cur; at != start; at = prev[at].prev {
					out = append([]edge{prev[at].via}, out...)
				}
				return out
			}
			next := node{y.To, y.ToSub}
			if seen[next] {
				continue
			}
			seen[next] = true
			prev[next] = step{cur, y}
			queue = append(queue, next)
		}
	}
	return nil
}

func witnessHops(x edge) []diag.Hop {
	if !x.ToPos.IsValid() {
		return nil
	}
	if x.handed != "" {
		return []diag.Hop{{Pos: x.FromPos, What: x.handed}, {Pos: x.ToPos, What: x.Fn + " takes " + x.ToName}}
	}
	hops := []diag.Hop{
		{Pos: x.FromPos, What: x.Fn + " holds " + x.FromName + x.fromWhere},
		{Pos: x.ToPos, What: x.Fn + " takes " + x.ToName},
	}
	if x.ToLeaf.IsValid() {
		hops = append(hops, diag.Hop{Pos: x.ToLeaf, What: x.ToName + " locked here"})
	}
	return hops
}

// nestedInstances reports a cycle of two edges witnessed by one nesting
// of one function: A held, then B, then another object's A (a hash
// stripe, the series, the series' own stripe). Its A at both ends are
// two objects of one class, which order nothing by design (edges.go);
// only the function run twice at once with the two swapped could wait,
// as for any two objects of a class.
func nestedInstances(c cycle) bool {
	if len(c.edges) != 2 {
		return false
	}
	for i, x := range c.edges {
		y := c.edges[1-i]
		if x.Fn == y.Fn && x.ToPos == y.FromPos && slices.Contains(y.within, x.FromPos) {
			return true
		}
	}
	return false
}
