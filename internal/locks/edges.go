package locks

import (
	"cmp"
	"go/token"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/lockop"
)

// edge says lock class To was taken while From was held.
type edge struct {
	From, To       string // class keys
	Fn             string // function where it happened
	FromPos, ToPos token.Pos
	// ToLeaf is where a callee takes To when ToPos is the call leading
	// there (in this package), for related information.
	ToLeaf           token.Pos
	Witness          string // "in Broker.poll (broker.go:20 -> broker.go:22)"
	FromName, ToName string
	// FromSub, ToSub refine the classes (Hold.Sub): a cycle closes only
	// through locks that can be the same ("" matches any).
	FromSub, ToSub string
	// fromWhere: " where first is true" when From is held only where a
	// condition holds (Hold.heldWhere).
	fromWhere string
	// declared: the edge breaks a //confined:before order, already
	// reported as such; cycles through it are not reported again.
	declared bool
	// handed: an edge of another package's interface call run on a
	// type this package handed it (dispatch.go), saying so at FromPos.
	handed string
	// test: witnessed in a _test.go file. must: To is taken for sure once
	// the witness gets there (directly, or on every path of callees
	// called exactly, a loop's turns included), the evidence a long cycle
	// needs (cycles.go).
	test, must bool
	// ends: which ends the witness holds or takes exclusively.
	ends edgeEnds
	// within: where the witness holds other locks of To's class, other
	// objects, as it takes To (nestedInstances).
	within []token.Pos
}

// edgesTo records an edge from every lock definitely held in s to h,
// taken at pos (directly, or through the calls in via; must as for
// edge.must; testCode: the acquisition is in a _test.go file, as when
// production code calls a test's fake through an interface), and checks
// declared //confined:before orders.
func (w *walker) edgesTo(s State, h Hold, pos token.Pos, via *callChain, must, testCode bool) {
	w.edgesFrom(s.holds, h, w.siteAt(pos, via, testCode), must)
}

// siteAt is the walked function's edge site at pos, reached through via.
func (w *walker) siteAt(pos token.Pos, via *callChain, testCode bool) edgeSite {
	site := edgeSite{fn: w.e.funcName(w.fn), pos: pos, test: testCode || w.e.inTest(pos)}
	if via != nil {
		site.via = via.text()
	}
	return site
}

// edgeSite is where an edge is witnessed: the function, the position of
// the acquisition (or the call leading to it) and the calls on the way.
type edgeSite struct {
	fn   string
	pos  token.Pos
	via  string
	test bool
}

// edgesFrom records an edge from every definite hold of holds to h.
func (w *walker) edgesFrom(holds []Hold, h Hold, site edgeSite, must bool) {
	if h.Class == "" {
		return
	}
	for _, o := range holds {
		apart := distinctValueSubs(o, h)
		if o.Class == h.Class && !apart {
			w.noteTreeStep(o, h, site, must)
			w.noteSymmetric(o, h, holds, site.pos)
		}
		if o.Maybe && !w.heldWhere(o) || o.Class == "" || o.Class == h.Class && !apart {
			continue
		}
		broken := w.checkBefore(o, h, site.pos) // a declared order holds even for private locks
		// A lock of an object no other goroutine can see yet neither
		// waits for anyone nor makes anyone wait.
		if w.private(h) || w.private(o) || h.Fresh {
			continue
		}
		x := edge{From: o.Class, To: h.Class, FromSub: o.Sub, ToSub: h.Sub, FromPos: o.Pos, ToPos: site.pos,
			declared: broken, test: site.test, must: must, ends: edgeEnds{from: !o.Shared, to: !h.Shared}, within: sameClassHeld(holds, h)}
		if h.leaf != site.pos {
			x.ToLeaf = h.leaf
		}
		w.e.noteEnds(x.key(), x.ends)
		w.noteEdgeGates(x, holds)
		x.Fn = site.fn
		w.e.addTestEdge(x, func() edge { return w.named(x, o, h, site) })
		if !w.e.betterWitness(x) {
			continue
		}
		w.e.addEdge(w.named(x, o, h, site))
	}
}

// heldWhere reports whether a maybe-hold is held exactly where a
// condition on a parameter holds (a lock taken and its unlock deferred
// under `if first {`): what is taken after the branches merge is taken
// under it on the path where the condition holds, as inside the branch.
// Not a lock held only around a loop's back edge, lent, tried or
// released on the other path; not one held on entry, whose condition is
// its caller's; not for a take in a defer registered on some paths only,
// whose running is itself a guess.
func (w *walker) heldWhere(h Hold) bool {
	if _, atEntry := w.entry.find(h.Path); atEntry || w.maybeDefer {
		return false // tagged in another frame (a closure run in place)
	}
	// Not a flag read from shared state either (`if !s.running {`): often
	// the gate of a protocol that keeps the two orders apart, which edges
	// do not model.
	if h.Loop || h.Lent || h.Try || h.leaky {
		return false
	}
	if paramCond(h.tagKey) && (h.tag2Key == "" || paramCond(h.tag2Key)) {
		return true
	}
	// A receiver's own flag (`if !c.batched { c.lock.Lock(); defer
	// c.lock.Unlock() }`: podman's Inspect, locking unless the caller
	// batches) when the lock is held from there to the return, also
	// through a Locker of the package's own (an inferred or opaque hold).
	direct := h
	direct.Inferred, direct.Opaque = false, false
	return w.modeFlag(h.tagKey) && (h.tag2Key == "" || w.modeFlag(h.tag2Key)) && w.heldToReturn(direct)
}

// modeFlag reports whether a condition key tests a field of the
// function's receiver ("p0.batched") that the function does not set: a
// mode its caller chose, not a gate it flips on the way (`start :=
// !s.filling; s.filling = true`), which may keep two orders apart.
func (w *walker) modeFlag(key string) bool {
	path, _, _ := strings.Cut(key, "#")
	root, field, ok := strings.Cut(path, ".")
	if !ok || root != "p0" || field == "" || strings.Contains(field, ".") || len(w.fn.Params) == 0 {
		return false
	}
	for _, b := range w.fn.Blocks {
		for _, instr := range b.Instrs {
			st, ok := instr.(*ssa.Store)
			if !ok {
				continue
			}
			if fa, ok := st.Addr.(*ssa.FieldAddr); ok && fa.X == w.fn.Params[0] {
				if f := lockop.FieldOf(fa); f != nil && f.Name() == field {
					return false
				}
			}
		}
	}
	return true
}

// named completes x with the names of its locks and its witness text.
func (w *walker) named(x edge, o, h Hold, site edgeSite) edge {
	x.FromName, x.ToName = o.Name, h.Name
	if o.Name == h.Name && distinctValueSubs(o, h) {
		x.FromName, x.ToName = shortClass(o.Sub), shortClass(h.Sub) // "A.mu.Mutex", not the wrapper's field twice
	}
	x.Witness = "in " + x.Fn + " (" + w.e.at(o.Pos) + " -> " + w.e.at(site.pos)
	if site.via != "" {
		x.Witness += " via " + site.via
	}
	if o.Maybe {
		x.fromWhere = " where " + w.condsText(o.conds())
		x.Witness += "," + x.fromWhere
	}
	x.Witness += ")"
	return x
}

// edgeKey identifies an edge: classes and refinements at both ends.
type edgeKey struct{ from, to, fromSub, toSub string }

func (x edge) key() edgeKey { return edgeKey{x.From, x.To, x.FromSub, x.ToSub} }

// betterWitness reports whether x would replace the witness recorded for
// its key: by a rule that does not depend on the order functions are
// walked in (production before test, certain before possible, then the
// earliest position), so every driver reports the same witness.
func (e *engine) betterWitness(x edge) bool {
	i, ok := e.edgeAt[x.key()]
	return !ok || x.betterThan(e.edges[i])
}

func (x edge) betterThan(old edge) bool {
	if x.declared && !old.declared {
		return true
	}
	if old.test != x.test {
		return old.test
	}
	if old.must != x.must {
		return x.must
	}
	// A witness that takes a lock exclusively deadlocks without a
	// waiting writer: it says more than one that only read-locks.
	if n, o := x.ends.count(), old.ends.count(); n != o {
		return n > o
	}
	// One taken under no other object of its class says more than one
	// nested in such an object (nestedInstances).
	if (len(x.within) == 0) != (len(old.within) == 0) {
		return len(x.within) == 0
	}
	return x.ToPos < old.ToPos || x.ToPos == old.ToPos && x.FromPos < old.FromPos
}

func (e *engine) addEdge(x edge) {
	if e.edgeAt == nil {
		e.edgeAt = map[edgeKey]int{}
	}
	if i, ok := e.edgeAt[x.key()]; ok {
		x.declared = x.declared || e.edges[i].declared
		e.edges[i] = x
		return
	}
	e.edgeAt[x.key()] = len(e.edges)
	e.edges = append(e.edges, x)
}

// testEdgeKey identifies a test function's witness of an edge.
type testEdgeKey struct {
	edgeKey
	fn string
}

// addTestEdge keeps x, seen in test code, as its function's witness of
// the edge when it is the best one so far (complete builds it named).
func (e *engine) addTestEdge(x edge, complete func() edge) {
	if !x.test {
		return
	}
	k := testEdgeKey{x.key(), x.Fn}
	if old, ok := e.testEdges[k]; ok && !x.betterThan(old) {
		return
	}
	if e.testEdges == nil {
		e.testEdges = map[testEdgeKey]edge{}
	}
	e.testEdges[k] = complete()
}

// cycleStarts lists the edges a cycle search starts from: every edge's
// witness, then the other tests' witnesses of test edges, in a fixed
// order.
func (e *engine) cycleStarts() []edge {
	out := slices.Clone(e.edges)
	var more []edge
	for k, x := range e.testEdges {
		if i, ok := e.edgeAt[k.edgeKey]; !ok || e.edges[i].Fn != k.fn {
			more = append(more, x)
		}
	}
	slices.SortFunc(more, func(a, b edge) int {
		return cmp.Or(strings.Compare(a.From, b.From), strings.Compare(a.To, b.To), strings.Compare(a.FromSub, b.FromSub), strings.Compare(a.ToSub, b.ToSub), strings.Compare(a.Fn, b.Fn))
	})
	return append(out, more...)
}

// inTest reports whether pos lies in a _test.go file.
func (e *engine) inTest(pos token.Pos) bool {
	f := e.p.Pass.Fset.File(pos)
	return f != nil && strings.HasSuffix(f.Name(), "_test.go")
}

func (e *engine) edgesFact() *facts.LockEdges {
	f := &facts.LockEdges{}
	for _, x := range e.edges {
		if e.locals[x.From] || e.locals[x.To] {
			continue // no importer can take a local (localclass.go)
		}
		wit := "in " + e.p.Pass.Pkg.Name() + "." + strings.TrimPrefix(x.Witness, "in ")
		if x.handed != "" {
			wit = x.Witness // already names the other package's function
		}
		ends := e.exclusive[x.key()]
		f.Edges = append(f.Edges, facts.Edge{From: x.From, To: x.To, FromSub: x.FromSub, ToSub: x.ToSub, Witness: wit, Test: x.test, Must: x.must, FromShared: !ends.from, ToShared: !ends.to})
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
		add(edge{From: x.From, To: x.To, FromSub: x.FromSub, ToSub: x.ToSub, FromName: shortClass(x.From), ToName: shortClass(x.To), Witness: x.Witness, test: x.Test, must: x.Must})
		e.noteImportedEnds(x)
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

// sameClassHeld lists where holds keeps locks of h's class on other
// objects than h's.
func sameClassHeld(holds []Hold, h Hold) []token.Pos {
	var out []token.Pos
	for _, o := range holds {
		if o.Class == h.Class && o.Path != h.Path && !o.Maybe {
			out = append(out, o.Pos)
		}
	}
	return out
}

// distinctValueSubs reports whether two locks of one class sit in two
// different struct fields held by value (Hold.Sub, not a pointer's alias
// group): a lock type embedded in a wrapper (cockroach's syncutil.Mutex,
// `type Mutex struct{ sync.Mutex }`) declares one field for every
// struct that holds one, and A.mu and B.mu are two locks that order
// each other as two fields of their own would.
func distinctValueSubs(a, b Hold) bool {
	return a.Sub != "" && b.Sub != "" && a.Sub != b.Sub && !strings.HasPrefix(a.Sub, "ptr:") && !strings.HasPrefix(b.Sub, "ptr:")
}
