package locks

import (
	"cmp"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// Objects of one type linked as a tree, each with its own lock: a field
// to the parent (a *T) and one to the children (a container of *T).
// Holding a node's lock while taking its parent's, somewhere, and holding
// a node's lock while taking a child's, elsewhere, deadlock on a parent
// and child both reach (yunikorn's queues, x-ray's segments). Two locks
// of one class are no edge otherwise (edges.go); here the paths say
// which is the parent: the lock taken is the held object's F field's (up)
// or was read from the held object's container field G (down,
// Hold.elemOf). Package-local: the witnesses' paths are the functions'.

// treeStep is a witness of one direction along a class's tree.
type treeStep struct {
	field string // the parent's or the children's field followed
	up    bool
	x     edge
}

// noteTreeStep records the take of h under o, both of one class, when h
// is the lock of o's object's parent or of one of its children.
func (w *walker) noteTreeStep(o, h Hold, site edgeSite, must bool) {
	if !w.report || o.Class == "" || o.Maybe || o.Path == "" || w.private(h) || w.private(o) || h.Fresh {
		return
	}
	suffix := "." + o.Class[strings.LastIndexByte(o.Class, '.')+1:]
	held, ok := strings.CutSuffix(o.Path, suffix)
	if !ok {
		return
	}
	step := treeStep{}
	if taken, ok := strings.CutSuffix(h.Path, suffix); ok && h.Path != "" {
		step.field = repeatedField(strings.TrimPrefix(taken, held))
		step.up = step.field != ""
	}
	if step.field == "" {
		step.field = oneField(strings.TrimPrefix(h.elemOf, held))
	}
	if step.field == "" {
		return
	}
	x := edge{From: o.Class, To: h.Class, FromPos: o.Pos, ToPos: site.pos, Fn: site.fn, test: site.test, must: must, ends: edgeEnds{from: !o.Shared, to: !h.Shared}}
	step.x = w.named(x, o, h, site)
	w.e.treeSteps[o.Class] = append(w.e.treeSteps[o.Class], step)
}

// candidateTreeSteps records the tree steps of an interface method's
// candidate: which one runs is not known, but if it is this one, its
// receiver is the interface value, and the lock it takes is that value's
// (a directory's parent kept as a childCloser, which a directory or the
// root implements). Only the tree's direction is recorded: no edge, no
// double lock.
func (w *walker) candidateTreeSteps(t *target, tk take, h Hold, s State, pos token.Pos, via *callChain) {
	if t.exact || t.at == nil || h.Path != "" || tk.Path == "" {
		return
	}
	call, ok := t.at.(ssa.CallInstruction)
	if !ok || !call.Common().IsInvoke() {
		return
	}
	p, ok := w.calleePath(t, tk.Path)
	if !ok || p == "" {
		return
	}
	h.Path = p
	site := w.siteAt(pos, via, tk.test)
	for _, o := range s.holds {
		if o.Class == h.Class && !distinctValueSubs(o, h) {
			w.noteTreeStep(o, h, site, false)
		}
	}
}

// repeatedField returns F when rest is ".F", ".F.F", ...: the parent,
// the grandparent; "" otherwise.
func repeatedField(rest string) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(rest, "."), ".")
	f := oneField(rest[:min(len(rest), len(first)+1)])
	if f == "" {
		return ""
	}
	for r := rest; r != ""; {
		next, ok := strings.CutPrefix(r, "."+f)
		if !ok {
			return ""
		}
		r = next
	}
	return f
}

// oneField returns F when rest is ".F", "" otherwise.
func oneField(rest string) string {
	f, ok := strings.CutPrefix(rest, ".")
	if !ok || f == "" || strings.ContainsAny(f, ".[:") {
		return ""
	}
	return f
}

// elemPath names the container obj was read from as one element, in the
// walked function's paths ("p0.children" for a child ranged over in
// n.children); "" when obj is no element read or the container has no
// portable name.
func (w *walker) elemPath(obj ssa.Value) string {
	fn, v := w.e.objs.Resolve(w.fn, obj)
	if fn != w.fn {
		return ""
	}
	c := objects.ContainerOf(v)
	if c == nil {
		return ""
	}
	if p := pathOf(w.fn, c); portable(p) {
		return p
	}
	return ""
}

// reportTreeInversions reports, per class, a step up and a step down
// whose locks conflict: each of the two locks is held or taken
// exclusively on one side at least (two readers wait for no one).
func (e *engine) reportTreeInversions() {
	classes := make([]string, 0, len(e.treeSteps))
	for c := range e.treeSteps {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	for _, c := range classes {
		up, down, ok := e.treeInversion(e.treeSteps[c])
		if !ok {
			continue
		}
		msg := "lock order inversion along a tree of " + strings.TrimSuffix(up.x.FromName, "."+c[strings.LastIndexByte(c, '.')+1:]) +
			": " + up.x.FromName + " then its " + up.field + "'s " + up.x.Witness +
			" but " + down.x.FromName + " then a child's in " + down.field + " " + down.x.Witness +
			"; a node and its " + up.field + " locked this way by two goroutines deadlock"
		rule := "lock-order"
		if up.x.test || down.x.test {
			rule = "lock-order-test"
		}
		hops := append(witnessHops(down.x), witnessHops(up.x)...)
		e.findAlso(up.x.ToPos, rule, msg, []token.Pos{down.x.ToPos, down.x.FromPos}, hops...)
	}
}

// treeInversion picks the best witnessed pair of a step up and a step
// down that conflict.
func (e *engine) treeInversion(steps []treeStep) (up, down treeStep, ok bool) {
	best := func(dir bool) []treeStep {
		var out []treeStep
		for _, s := range steps {
			if s.up == dir {
				out = append(out, s)
			}
		}
		slices.SortStableFunc(out, func(a, b treeStep) int {
			if a.x.betterThan(b.x) {
				return -1
			}
			if b.x.betterThan(a.x) {
				return 1
			}
			return cmp.Compare(a.field, b.field)
		})
		return out
	}
	downs := best(false)
	for _, u := range best(true) {
		for _, d := range downs {
			parent := d.x.ends.from || u.x.ends.to
			child := d.x.ends.to || u.x.ends.from
			if parent && child && u.field != d.field {
				return u, d, true
			}
		}
	}
	return treeStep{}, treeStep{}, false
}

// calleeElemOf is tk.elemOf of t's callee in the walked function's
// paths: rewritten, or, for a take of a lock directly in a parameter's
// struct ("p0.mu"), the container the argument was read from.
func (w *walker) calleeElemOf(t *target, tk take) string {
	if tk.elemOf != "" {
		if p, ok := w.calleePath(t, tk.elemOf); ok && t.exact {
			return p
		}
		return ""
	}
	root, rest := rootOf(tk.Path)
	i := paramIndex(root, "p")
	if i < 0 || i >= len(t.vals) || strings.Count(rest, ".") != 1 {
		return ""
	}
	return w.elemPath(t.vals[i])
}
