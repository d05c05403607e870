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
	// declared: the edge breaks a //confined:before order, already
	// reported as such; cycles through it are not reported again.
	declared bool
}

// edgesTo records an edge from every lock definitely held in s to h,
// taken at pos (directly, or through the calls in via), and checks
// declared //confined:before orders.
func (w *walker) edgesTo(s State, h Hold, pos token.Pos, via []string) {
	if h.Class == "" {
		return
	}
	for _, o := range s.holds {
		if o.Maybe || o.Class == "" || o.Class == h.Class {
			continue
		}
		broken := w.checkBefore(o, h, pos)
		wit := "in " + w.e.funcName(w.fn) + " (" + w.e.at(o.Pos) + " -> " + w.e.at(pos)
		if len(via) > 0 {
			wit += " via " + strings.Join(via, " -> ")
		}
		w.e.addEdge(edge{From: o.Class, To: h.Class, FromName: o.Name, ToName: h.Name, Fn: w.e.funcName(w.fn), FromPos: o.Pos, ToPos: pos, Witness: wit + ")", declared: broken})
	}
}

func (e *engine) addEdge(x edge) {
	for _, o := range e.edges {
		if o.From == x.From && o.To == x.To {
			return
		}
	}
	e.edges = append(e.edges, x)
}

func (e *engine) edgesFact() *facts.LockEdges {
	f := &facts.LockEdges{}
	for _, x := range e.edges {
		wit := "in " + e.p.Pass.Pkg.Name() + "." + strings.TrimPrefix(x.Witness, "in ")
		f.Edges = append(f.Edges, facts.Edge{From: x.From, To: x.To, Witness: wit})
	}
	sort.Slice(f.Edges, func(i, j int) bool {
		a, b := f.Edges[i], f.Edges[j]
		return a.From < b.From || a.From == b.From && a.To < b.To
	})
	return f
}

// graph is every edge known: the package's and its dependencies'.
func (e *engine) graph() map[string][]edge {
	g := map[string][]edge{}
	seen := map[[2]string]bool{}
	add := func(x edge) {
		if k := [2]string{x.From, x.To}; !seen[k] {
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
		return a.From < b.From || a.From == b.From && (a.To < b.To || a.To == b.To && a.Witness < b.Witness)
	})
	for _, x := range imported {
		add(edge{From: x.From, To: x.To, FromName: shortClass(x.From), ToName: shortClass(x.To), Witness: x.Witness})
	}
	for k := range g {
		sort.SliceStable(g[k], func(i, j int) bool { return g[k][i].To < g[k][j].To })
	}
	return g
}

// pathBetween finds a shortest chain of edges from class a to class b.
func pathBetween(g map[string][]edge, a, b string) []edge {
	prev := map[string]edge{}
	seen := map[string]bool{a: true}
	queue := []string{a}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, x := range g[cur] {
			if seen[x.To] {
				continue
			}
			seen[x.To] = true
			prev[x.To] = x
			if x.To == b {
				var out []edge
				for at := b; at != a; at = prev[at].From {
					out = append([]edge{prev[at]}, out...)
				}
				return out
			}
			queue = append(queue, x.To)
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
		back := pathBetween(g, x.To, x.From)
		if back == nil || x.declared || slices.ContainsFunc(back, func(b edge) bool { return b.declared }) {
			continue
		}
		names := []string{x.From + ">" + x.To}
		for _, b := range back {
			names = append(names, b.From+">"+b.To)
		}
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
