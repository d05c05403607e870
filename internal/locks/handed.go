package locks

import (
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
)

// The importing side of dispatch.go: a type this package hands to another
// package's interface runs under the locks that package holds when it
// calls the interface.

// dispatchEdges adds, for every imported interface with exported calls
// under locks that this package converts a named type to, the edges from
// each held lock to the takes of that type's method.
func (e *engine) dispatchEdges() {
	if e.convs == nil {
		e.scanConversions()
	}
	var known map[edgeKey]bool
	for _, iface := range e.importedInterfaces() {
		var ld facts.LockDispatches
		if !e.p.Pass.ImportObjectFact(iface.Obj(), &ld) {
			continue
		}
		if known == nil {
			known = e.importedEdgeKeys()
		}
		for _, c := range e.convs {
			// A declaration that T implements the interface hands
			// nothing over: only values converted to it run there. A
			// type of the interface's own package is a candidate its
			// package judged already (implementations()).
			if c.asserted || c.from.Obj().Pkg() == iface.Obj().Pkg() || !types.Identical(c.to, iface) {
				continue
			}
			for _, d := range ld.Calls {
				e.dispatchEdgesOf(c, iface, d, known)
			}
		}
	}
}

// importedInterfaces lists, in a fixed order, the named interfaces of
// other packages this package converts values to.
func (e *engine) importedInterfaces() []*types.Named {
	var out []*types.Named
	seen := map[*types.TypeName]bool{}
	for _, c := range e.convs {
		n, ok := types.Unalias(c.to).(*types.Named)
		if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg() == e.p.Pass.Pkg || seen[n.Obj()] {
			continue
		}
		seen[n.Obj()] = true
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// importedEdgeKeys are the edges the dependencies already witnessed: a
// package that converts another's type adds none of those again.
func (e *engine) importedEdgeKeys() map[edgeKey]bool {
	out := map[edgeKey]bool{}
	for _, pf := range e.p.Pass.AllPackageFacts() {
		if le, ok := pf.Fact.(*facts.LockEdges); ok && pf.Package != e.p.Pass.Pkg {
			for _, x := range le.Edges {
				out[edgeKey{x.From, x.To, x.FromSub, x.ToSub}] = true
			}
		}
	}
	return out
}

// dispatchEdgesOf adds the edges of one exported call run on c's type.
func (e *engine) dispatchEdgesOf(c conversion, iface *types.Named, d facts.Dispatch, known map[edgeKey]bool) {
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(c.from), false, c.from.Obj().Pkg(), d.Method)
	mf, ok := obj.(*types.Func)
	if !ok {
		return
	}
	fn := e.p.SSA.Pkg.Prog.FuncValue(mf)
	sum := e.summaryOf(fn)
	if sum == nil {
		return
	}
	impl := e.funcName(fn)
	for _, tk := range sum.takes {
		if tk.Class == d.Class {
			e.dispatchRelock(c, iface, d, fn, tk)
			continue
		}
		if tk.afterRelease || tk.fresh || tk.Class == "" || tk.cond > maxCond || tk.Via.len()+1 > maxVia {
			continue
		}
		x := edge{From: d.Class, To: tk.Class, FromSub: d.Sub, ToSub: tk.Sub, FromName: shortClass(d.Class), ToName: tk.Name,
			Fn: impl, FromPos: c.pos, ToPos: c.pos, test: d.Test || tk.test}
		if known[x.key()] {
			continue
		}
		if tk.Pos.IsValid() && e.p.FuncSet[fn] {
			x.ToPos = tk.Pos
		}
		at := tk.At
		if at == "" {
			at = e.at(tk.Pos)
		}
		link := " via "
		if strings.Contains(d.Witness, " via ") {
			link = " -> " // the call was inside a callee: the chain goes on
		}
		x.Witness = strings.TrimSuffix(d.Witness, ")") + link + impl + " at " + at + ")"
		caller, _ := witnessParts(d.Witness)
		x.handed = c.from.Obj().Name() + " is handed over as " + iface.Obj().Pkg().Name() + "." + iface.Obj().Name() +
			" here; " + caller + " calls its " + d.Method + " holding " + x.FromName
		x.ends = edgeEnds{from: !d.Shared, to: !tk.Shared}
		e.noteEnds(x.key(), x.ends)
		if e.betterWitness(x) {
			e.addEdge(x)
		}
	}
}

// dispatchRelock reports a method of a type handed over as iface that takes,
// on every path, the very lock the declaring package holds when it calls
// the method: reached through the same argument (d.Path), so the same
// instance whichever value runs. Once per type, interface, method and lock.
func (e *engine) dispatchRelock(c conversion, iface *types.Named, d facts.Dispatch, fn *ssa.Function, tk take) {
	if d.Path == "" || tk.afterRelease || !tk.certain() || tk.branch > 0 || d.Shared && tk.Shared || toDeclPath(fn, tk.Path) != d.Path {
		return
	}
	k := relockKey{c.from, iface.Obj(), d.Method, d.Class}
	if e.dispatchRelocks[k] {
		return
	}
	if e.dispatchRelocks == nil {
		e.dispatchRelocks = map[relockKey]bool{}
	}
	e.dispatchRelocks[k] = true
	at := tk.At
	if at == "" {
		at = e.at(tk.Pos)
	}
	name := shortClass(d.Class)
	by := e.funcName(fn)
	if tk.Via != nil {
		by += " -> " + tk.Via.text()
	}
	caller, where := witnessParts(d.Witness)
	via := iface.Obj().Pkg().Name() + "." + iface.Obj().Name()
	msg := name + " locked again by " + by + " (at " + at + "): " + caller + " calls it through " + via + "." + d.Method +
		" holding " + name + " (" + where + ", the same lock, reached through the call's arguments); " +
		c.from.Obj().Name() + " is handed over as a " + via + " here: self-deadlock"
	e.find(c.pos, "double-lock", msg)
}

// witnessParts splits a dispatch witness, "in pkg.F (a.go:1 -> a.go:2)",
// into the function and the positions.
func witnessParts(w string) (caller, where string) {
	caller, where, _ = strings.Cut(strings.TrimSuffix(strings.TrimPrefix(w, "in "), ")"), " (")
	return caller, where
}

type relockKey struct {
	from   *types.Named
	iface  *types.TypeName
	method string
	class  string
}

// handsToDispatcher reports whether mi converts a named type to another
// package's interface whose calls under locks that package exported.
func (e *engine) handsToDispatcher(mi *ssa.MakeInterface) bool {
	n, ok := types.Unalias(mi.Type()).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg() == e.p.Pass.Pkg {
		return false
	}
	var ld facts.LockDispatches
	return e.p.Pass.ImportObjectFact(n.Obj(), &ld)
}
