package locks

import (
	"cmp"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/objects"
)

// Across packages, an interface call under a lock runs code the declaring
// package cannot see: the implementations live in the packages that import
// it (a stream calling its owning session back through an Owner interface,
// a logger firing hooks). The declaring package exports each such call with
// the locks held (a LockDispatches fact on the interface); a package that
// converts a type of its own, or one it imports, to that interface adds the
// edges from each held lock to what that type's method takes, as if it had
// seen the call (handed.go). Edges, as for an interface call with several
// candidates: which value runs is not known. A double lock only where the
// method surely takes the very lock held, reached through the argument
// that leads to it (Dispatch.Path).
//
// A call under the lock counts made directly or inside the functions of
// the package it calls, up to maxDispatchDepth static calls down
// (`l.mu.Lock(); l.fireHooks(e)`), on any of their paths: the edges need a
// cycle to be reported. Only interfaces the package declares, as
// implementations() resolves them inside a package.

// maxDispatches bounds the calls exported per interface; maxDispatchDepth
// the static calls followed down to one.
const (
	maxDispatches    = 32
	maxDispatchDepth = 3
)

type dispatchKey struct{ method, class, sub string }

type heldDispatch struct {
	facts.Dispatch
	pos token.Pos // the call, to keep the first witness whatever the walk order
}

// recordDispatch records an interface call made with definite holds, when
// the package declares the interface.
func (w *walker) recordDispatch(call *ssa.CallCommon, pos token.Pos, s State) {
	if !w.report || !call.IsInvoke() {
		return
	}
	tn := localInterface(call.Value.Type(), w.e.p.Pass.Pkg)
	if tn == nil {
		return
	}
	w.dispatchUnder(s, dispatchSite{iface: tn, method: call.Method.Name(), call: call}, pos)
}

// dispatchPath is the held lock o as the method called reaches it: through
// an argument that is its owner, or an object built here whose field
// holds its owner (`h.Fire(&Entry{Logger: l})` under l.mu reaches it as
// "param0.Logger.mu"); "" when no argument does.
func (w *walker) dispatchPath(call *ssa.CallCommon, o Hold) string {
	if !portable(o.Path) {
		return ""
	}
	for i, a := range call.Args {
		param := "param" + strconv.Itoa(i)
		if ap := pathOf(w.fn, a); ap != "" {
			if rest, ok := pathUnder(o.Path, ap); ok {
				return param + rest
			}
		}
		st := objects.StructOf(a.Type())
		if st == nil {
			continue
		}
		for f := range st.Fields() {
			if p, ok := objects.Through(w.fn, a, "."+f.Name(), w.at); ok {
				if rest, ok := pathUnder(o.Path, p); ok && p != "" {
					return param + "." + f.Name() + rest
				}
			}
		}
	}
	return ""
}

// dispatchSite is an interface call reached inside a callee.
type dispatchSite struct {
	iface  *types.TypeName
	method string
	at     string          // "file.go:12" of the call, "" when it is the walked call
	via    *callChain      // the functions called down to it
	call   *ssa.CallCommon // the walked call itself, nil for one inside a callee
}

// dispatchUnder records site, reached from the walked function at pos,
// under each lock definitely held there.
func (w *walker) dispatchUnder(s State, site dispatchSite, pos token.Pos) {
	test := w.e.inTest(pos)
	for _, o := range definite(s.holds) {
		if o.Class == "" || o.Fresh || w.private(o) {
			continue
		}
		wit := "in " + w.e.p.Pass.Pkg.Name() + "." + w.e.funcName(w.fn) + " (" + w.e.at(o.Pos) + " -> " + w.e.at(pos)
		if site.via != nil {
			wit += " via " + site.via.text() + " at " + site.at
		}
		d := heldDispatch{facts.Dispatch{Method: site.method, Class: o.Class, Sub: o.Sub, Shared: o.Shared, Test: test, Witness: wit + ")"}, pos}
		if site.call != nil {
			d.Path = w.dispatchPath(site.call, o)
		}
		w.e.addDispatch(site.iface, d)
	}
}

// calleeDispatches records the interface calls a static callee of the
// package makes, directly or below, under the locks held at its call.
func (w *walker) calleeDispatches(t *target, pos token.Pos, s State) {
	if !w.report || !t.exact || !w.e.p.FuncSet[t.fn] || len(definite(s.holds)) == 0 {
		return
	}
	for _, site := range w.e.reachableDispatches(t.fn) {
		w.dispatchUnder(s, site, pos)
	}
}

// reachableDispatches lists the calls of the package's interfaces fn makes
// directly or through static calls of the package's functions, at most
// maxDispatchDepth calls down from fn (fn included).
func (e *engine) reachableDispatches(fn *ssa.Function) []dispatchSite {
	if out, ok := e.dispatchSites[fn]; ok {
		return out
	}
	if e.dispatchSites == nil {
		e.dispatchSites = map[*ssa.Function][]dispatchSite{}
	}
	out := e.dispatchesBelow(fn, 1, map[*ssa.Function]bool{})
	e.dispatchSites[fn] = out
	return out
}

func (e *engine) dispatchesBelow(fn *ssa.Function, depth int, onPath map[*ssa.Function]bool) []dispatchSite {
	onPath[fn] = true
	defer delete(onPath, fn)
	var out []dispatchSite
	name := e.funcName(fn)
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			call, ok := instr.(*ssa.Call)
			if !ok || len(out) >= maxDispatches {
				continue
			}
			if call.Call.IsInvoke() {
				if tn := localInterface(call.Call.Value.Type(), e.p.Pass.Pkg); tn != nil {
					out = append(out, dispatchSite{iface: tn, method: call.Call.Method.Name(), at: e.at(call.Pos()), via: (*callChain)(nil).push(name)})
				}
				continue
			}
			callee := call.Call.StaticCallee()
			if callee == nil || depth >= maxDispatchDepth || onPath[callee] || !e.p.FuncSet[callee] {
				continue
			}
			for _, site := range e.dispatchesBelow(callee, depth+1, onPath) {
				site.via = site.via.push(name)
				out = append(out, site)
			}
		}
	}
	return out
}

// localInterface returns the declaring name of t when t is a
// non-generic named interface declared in pkg.
func localInterface(t types.Type, pkg *types.Package) *types.TypeName {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || !types.IsInterface(n) || n.TypeArgs().Len() > 0 || n.Obj().Pkg() != pkg {
		return nil
	}
	return n.Obj()
}

func (e *engine) addDispatch(tn *types.TypeName, d heldDispatch) {
	if e.dispatches == nil {
		e.dispatches = map[*types.TypeName]map[dispatchKey]heldDispatch{}
	}
	m := e.dispatches[tn]
	if m == nil {
		m = map[dispatchKey]heldDispatch{}
		e.dispatches[tn] = m
	}
	k := dispatchKey{d.Method, d.Class, d.Sub}
	old, ok := m[k]
	switch {
	case !ok && len(m) >= maxDispatches:
	case !ok, old.Test && !d.Test, old.Test == d.Test && d.pos < old.pos:
		m[k] = d
	}
}

// exportDispatches exports the recorded calls, one fact per interface.
func (e *engine) exportDispatches() {
	for tn, m := range e.dispatches {
		f := &facts.LockDispatches{}
		for _, d := range m {
			f.Calls = append(f.Calls, d.Dispatch)
		}
		slices.SortFunc(f.Calls, func(a, b facts.Dispatch) int {
			return cmp.Or(strings.Compare(a.Method, b.Method), strings.Compare(a.Class, b.Class), strings.Compare(a.Sub, b.Sub))
		})
		e.p.Pass.ExportObjectFact(tn, f)
	}
}

// dispatchedClasses are the classes held at exported calls: an importer
// orders its locks after them, so they are no private leaves.
func (e *engine) dispatchedClasses(leaves map[string]bool) {
	for _, m := range e.dispatches {
		for k := range m {
			delete(leaves, k.class)
		}
	}
}
