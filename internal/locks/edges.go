package locks

import (
	"go/token"
	"slices"
	"sort"
	"strings"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/diag"
)

// edge says lock class To was taken while From was held.
type edge struct {
	From, To         string // class keys
	Fn               string // function where it happened
	FromPos, ToPos   token.Pos
	Witness          string // "in Broker.poll (broker.go:20 -> broker.go:22)"
	FromName, ToName string
	// FromSub, ToSub refine the classes (Hold.Sub): a cycle closes only
	// through locks that can be the same ("" matches any).
	FromSub, ToSub string
	// declared: the edge breaks a //confined:before order, already
	// reported as such; cycles through it are not reported again.
	declared bool
}

// edgesTo records an edge from every lock definitely held in s to h,
// taken at pos (directly, or through the calls in via), and checks
// declared //confined:before orders.
func (w *walker) edgesTo(s State, h Hold, pos token.Pos, via *callChain) {
	// A lock of an object no other goroutine can see yet neither waits
	// for anyone nor makes anyone wait.
	if h.Class == "" {
		return
	}
	for _, o := range s.holds {
		if o.Maybe || o.Class == "" || o.Class == h.Class {
			continue
		}
		broken := w.checkBefore(o, h, pos) // a declared order holds even for private locks
		if w.private(h) || w.private(o) {
			continue
		}
		k := edgeKey{o.Class, h.Class, o.Sub, h.Sub}
		if w.e.edgeSeen[k] {
			continue // the first witness stands
		}
		wit := "in " + w.e.funcName(w.fn) + " (" + w.e.at(o.Pos) + " -> " + w.e.at(pos)
		if via != nil {
			wit += " via " + via.text()
		}
		w.e.addEdge(edge{From: o.Class, To: h.Class, FromSub: o.Sub, ToSub: h.Sub, FromName: o.Name, ToName: h.Name, Fn: w.e.funcName(w.fn), FromPos: o.Pos, ToPos: pos, Witness: wit + ")", declared: broken})
	}
}

// edgeKey identifies an edge: classes and refinements at both ends.
type edgeKey struct{ from, to, fromSub, toSub string }

func (e *engine) addEdge(x edge) {
	k := edgeKey{x.From, x.To, x.FromSub, x.ToSub}
	if e.edgeSeen[k] {
		return
	}
	if e.edgeSeen == nil {
		e.edgeSeen = map[edgeKey]bool{}
	}
	e.edgeSeen[k] = true
	e.edges = append(e.edges, x)
}

func (e *engine) edgesFact() *facts.LockEdges {
	f := &facts.LockEdges{}
	for _, x := range e.edges {
		wit := "in " + e.p.Pass.Pkg.Name() + "." + strings.TrimPrefix(x.Witness, "in ")
		f.Edges = append(f.Edges, facts.Edge{From: x.From, To: x.To, FromSub: x.FromSub, ToSub: x.ToSub, Witness: wit})
	}
	sort.Slice(f.Edges, func(i, j int) bool { return edgeLess(f.Edges[i], f.Edges[j]) })
	return f
}

// graph is every edge known: the package's and its dependencies'.
func (e *engine) graph() map[string][]edge {
	g := map[string][]edge{}
	seen := map[[4]string]bool{}
	add := func(x edge) {
		if k := [4]string{x.From, x.To, x.FromSub, x.ToSub}; !seen[k] {
			seen[k] = true
			g[x.From] = append(g[x.From], x)
		}
	}
	for _, x := range e.edges {
		add(x)
	}
	var imported []facts.Edge
	for _, pf := range e.p.Pass.AllPackageFacts() {
		if le, ok := pf.Fact.(*facts.LockEdges); ok && pf.Package != e.p.Pass.Pkg {
			imported = append(imported, le.Edges...)
		}
	}
	sort.Slice(imported, func(i, j int) bool {
		a, b := imported[i], imported[j]
		return edgeLess(a, b) || !edgeLess(b, a) && a.Witness < b.Witness
	})
	for _, x := range imported {
		add(edge{From: x.From, To: x.To, FromSub: x.FromSub, ToSub: x.ToSub, FromName: shortClass(x.From), ToName: shortClass(x.To), Witness: x.Witness})
	}
	for k := range g {
		sort.SliceStable(g[k], func(i, j int) bool {
			a, b := g[k][i], g[k][j]
			return a.To < b.To || a.To == b.To && (a.FromSub < b.FromSub || a.FromSub == b.FromSub && a.ToSub < b.ToSub)
		})
	}
	return g
}

func edgeLess(a, b facts.Edge) bool {
	if a.From != b.From {
		return a.From < b.From
	}
	if a.To != b.To {
		return a.To < b.To
	}
	if a.FromSub != b.FromSub {
		return a.FromSub < b.FromSub
	}
	return a.ToSub < b.ToSub
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

// reportCycles reports each cycle that closes in this package once, at
// the latest acquisition of its edges observed here.
func (e *engine) reportCycles() {
	if len(e.edges) == 0 {
		return
	}
	g := e.graph()
	type cycle struct {
		at   edge   // the reported edge (local)
		back []edge // the rest of the cycle, from at.To back to at.From
	}
	byKey := map[string]*cycle{}
	var keys []string
	for _, x := range e.edges {
		back := pathBetween(g, x)
		if back == nil || x.declared || slices.ContainsFunc(back, func(b edge) bool { return b.declared }) {
			continue
		}
		names := []string{x.From + ">" + x.To}
		for _, b := range back {
			names = append(names, b.From+">"+b.To)
		}
		slices.Sort(names)
		names = slices.Compact(names) // one report per cycle of classes
		sort.Strings(names)
		key := strings.Join(names, " ")
		if c, ok := byKey[key]; !ok {
			byKey[key] = &cycle{at: x, back: back}
			keys = append(keys, key)
		} else if x.ToPos > c.at.ToPos {
			c.at, c.back = x, back
		}
	}
	for _, k := range keys {
		c := byKey[k]
		var first []string
		var hops []diag.Hop
		for _, b := range c.back {
			first = append(first, b.FromName+" then "+b.ToName+" "+b.Witness)
			hops = append(hops, witnessHops(b)...)
		}
		msg := "lock order inversion: " + strings.Join(first, ", ") + " but " + c.at.FromName + " then " + c.at.ToName + " " + c.at.Witness
		e.find(c.at.ToPos, "lock-order", msg, append(hops, witnessHops(c.at)...)...)
	}
}

func witnessHops(x edge) []diag.Hop {
	if !x.ToPos.IsValid() {
		return nil
	}
	return []diag.Hop{
		{Pos: x.FromPos, What: x.Fn + " holds " + x.FromName},
		{Pos: x.ToPos, What: x.Fn + " takes " + x.ToName},
	}
}
