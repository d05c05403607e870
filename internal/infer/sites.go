package infer

import (
	"go/token"
	"go/types"
	"maps"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/ownership"
)

// site is one access of a field of the package's struct types, or of a
// package var, outside construction.
type site struct {
	fn    *ssa.Function
	pos   token.Pos
	v     *types.Var
	owner *types.Named // the struct type, nil for a package var
	// obj is the path of the object holding the field ("p0", "p0.shards[p1]"),
	// "" for a package var.
	obj   string
	write bool
	held  lockset
	what  string // as written: "c.hits"
}

// maxLockRounds bounds how many times callers' locks are pushed into
// their unexported callees (one level of calls per round): real chains of
// locking wrapper, helper and closure are shorter, and recursion stops
// changing after a round or two.
const maxLockRounds = 8

// collectSites walks every function under the locks it certainly holds
// and records its accesses to fields and package vars. The locks a
// function inherits are those its every call site holds, computed from
// the previous round until they no longer change. Calls on an object the
// caller is still constructing (c := &C{}; c.init()) constrain nothing:
// a function called only so initialises its receiver (construction).
func (s *state) collectSites() {
	inferable := s.inferable()
	entries := map[*ssa.Function]lockset{}
	s.ctorOnly = map[*ssa.Function]bool{}
	for round := 0; ; round++ {
		s.sites, s.testSites, s.siteAt = s.sites[:0], s.testSites[:0], map[siteKey]int{}
		next := map[*ssa.Function]lockset{}
		ctor, normal := map[*ssa.Function]bool{}, map[*ssa.Function]bool{}
		for _, fn := range s.p.Funcs {
			test := s.inTest(fn)
			walkLocks(fn, entries[fn], func(instr ssa.Instruction, held lockset) {
				s.noteSite(fn, instr, held)
				for _, c := range s.callsAt(fn, instr, held) {
					if !inferable[c.callee] || test {
						continue // tests call helpers as they like: they constrain nothing
					}
					if c.ctor {
						ctor[c.callee] = true
						continue
					}
					normal[c.callee] = true
					if prev, ok := next[c.callee]; ok {
						c.in = meet(prev, c.in)
					}
					next[c.callee] = c.in
				}
			})
		}
		ctorOnly := map[*ssa.Function]bool{}
		for fn := range ctor {
			ctorOnly[fn] = !normal[fn]
		}
		if round == maxLockRounds-1 || maps.EqualFunc(next, entries, equal) && maps.Equal(ctorOnly, s.ctorOnly) {
			return
		}
		entries, s.ctorOnly = next, ctorOnly
	}
}

// call is a synchronous call of a package function and the locks it
// passes; ctor marks a call on an object under construction.
type call struct {
	callee *ssa.Function
	in     lockset
	ctor   bool
}

// callsAt returns the calls instr makes: a static call, a closure
// created here (which runs under the locks held where it is made), or, at
// a function's exit (RunDefers), its deferred closures (see deferredCalls).
func (s *state) callsAt(fn *ssa.Function, instr ssa.Instruction, held lockset) []call {
	switch in := instr.(type) {
	case *ssa.Call:
		callee := s.local(in.Call.StaticCallee())
		if callee == nil {
			return nil
		}
		var binds []string
		if mc, ok := in.Call.Value.(*ssa.MakeClosure); ok {
			binds = s.ctx.Objects.BindingPaths(mc) // a closure called where it is made
		}
		args := in.Call.Args
		ctor := len(args) > 0 && s.constructing(fn, args[0], in)
		return []call{{callee, inherited(held, binds, objects.PathsOf(fn, args)), ctor}}
	case *ssa.MakeClosure:
		g, ok := in.Fn.(*ssa.Function)
		if !ok || deferredClosure(in) != nil {
			return nil // a deferred closure runs at exit, not here
		}
		return []call{{g, inherited(held, s.ctx.Objects.BindingPaths(in), nil), false}}
	case *ssa.RunDefers:
		return s.deferredCalls(fn, held)
	}
	return nil
}

// deferredCalls returns fn's deferred closures, called at its exit with
// the locks held there (deferred unlocks have not run yet) except those
// whose deferred unlock is registered after the closure: deferred calls
// run last first, so `defer mu.Unlock(); defer func() {...}()` runs the
// closure with mu held.
func (s *state) deferredCalls(fn *ssa.Function, held lockset) []call {
	var out []call
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			d, ok := instr.(*ssa.Defer)
			if !ok {
				continue
			}
			mc, ok := d.Call.Value.(*ssa.MakeClosure)
			if !ok {
				continue
			}
			g, ok := mc.Fn.(*ssa.Function)
			if !ok {
				continue
			}
			in := maps.Clone(held)
			for path := range laterUnlocks(fn, d) {
				delete(in, path)
			}
			out = append(out, call{g, inherited(in, s.ctx.Objects.BindingPaths(mc), nil), false})
		}
	}
	return out
}

// laterUnlocks returns the locks fn unlocks by a defer that is not
// certainly registered before d (earlier in d's block, or in a block that
// dominates it): those may run before d's call.
func laterUnlocks(fn *ssa.Function, d *ssa.Defer) map[string]bool {
	out := map[string]bool{}
	for _, b := range fn.Blocks {
		for i, instr := range b.Instrs {
			u, ok := instr.(*ssa.Defer)
			if !ok {
				continue
			}
			op, lock := lockop.Classify(&u.Call)
			if op != lockop.Unlock && op != lockop.RUnlock {
				continue
			}
			before := b.Dominates(d.Block()) && b != d.Block()
			if b == d.Block() {
				before = i < objects.InstrIndex(b, d)
			}
			if !before {
				out[objects.PathOf(fn, lock)] = true
			}
		}
	}
	return out
}

// deferredClosure returns the defer that calls mc, if that is its one use.
func deferredClosure(mc *ssa.MakeClosure) *ssa.Defer {
	var d *ssa.Defer
	for _, r := range *mc.Referrers() {
		switch r := r.(type) {
		case *ssa.Defer:
			if r.Call.Value != mc || d != nil {
				return nil
			}
			d = r
		case *ssa.DebugRef:
		default:
			return nil
		}
	}
	return d
}

// inferable marks the functions whose every caller is a static call (or,
// for a closure, whose one creation is called in place or handed to a
// synchronous call): they hold what every caller holds.
func (s *state) inferable() map[*ssa.Function]bool {
	static := map[*ssa.Function]int{}
	edges := map[*ssa.Function]int{}
	for _, fn := range s.p.Funcs {
		for _, e := range s.ctx.Calls(fn) {
			edges[e.Callee]++
		}
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if c, ok := instr.(*ssa.Call); ok {
					if callee := s.local(c.Call.StaticCallee()); callee != nil {
						static[callee]++
					}
				}
			}
		}
	}
	out := map[*ssa.Function]bool{}
	for _, fn := range s.p.Funcs {
		if s.ctx.RootOf(fn) != nil || s.ctx.Escapes(fn) {
			continue
		}
		if fn.Parent() != nil {
			mc := s.ctx.Objects.ClosureOf(fn)
			out[fn] = mc != nil && calledInPlace(mc)
			continue
		}
		out[fn] = static[fn] > 0 && static[fn] >= edges[fn] && !fn.Object().Exported()
	}
	return out
}

// calledInPlace reports whether a closure value is only called or passed
// to calls (not started or stored), or only deferred (see deferredCalls).
func calledInPlace(mc *ssa.MakeClosure) bool {
	if deferredClosure(mc) != nil {
		return true
	}
	for _, r := range *mc.Referrers() {
		switch r.(type) {
		case *ssa.Call, *ssa.DebugRef:
		default:
			return false
		}
	}
	return true
}

// local maps a callee to the package's source function, or nil.
func (s *state) local(fn *ssa.Function) *ssa.Function {
	if fn == nil {
		return nil
	}
	if o := fn.Origin(); o != nil {
		fn = o
	}
	if s.p.FuncSet[fn] {
		return fn
	}
	return nil
}

// noteSite records instr's access of a field or package var of this
// package, unless it is construction.
func (s *state) noteSite(fn *ssa.Function, instr ssa.Instruction, held lockset) {
	switch in := instr.(type) {
	case *ssa.FieldAddr:
		if objects.OnlySelected(in) {
			return
		}
		st := objects.StructOf(in.X.Type())
		owner := objects.NamedOf(in.X.Type())
		if st == nil || owner == nil || owner.Obj().Pkg() != s.p.Pass.Pkg || in.Field >= st.NumFields() {
			return
		}
		f := st.Field(in.Field)
		if !candidate(f) || s.constructing(fn, in.X, in) {
			return
		}
		what, ok := s.texts[in.Pos()]
		if !ok {
			what = f.Name()
		}
		s.add(site{fn: fn, pos: in.Pos(), v: f, owner: owner, obj: objects.PathOf(fn, in.X),
			write: ownership.Writes(in), held: held, what: what})
	case *ssa.UnOp, *ssa.Store:
		var g *ssa.Global
		write := false
		if u, ok := in.(*ssa.UnOp); ok && u.Op == token.MUL {
			g, _ = u.X.(*ssa.Global)
			write = g != nil && ownership.ElementsWritten(u)
		} else if st, ok := in.(*ssa.Store); ok {
			g, _ = st.Addr.(*ssa.Global)
			write = true
		}
		if g == nil {
			return
		}
		v, ok := g.Object().(*types.Var)
		if !ok || v.Pkg() != s.p.Pass.Pkg || !candidate(v) {
			return
		}
		s.add(site{fn: fn, pos: posOf(fn, in), v: v, write: write, held: held, what: v.Name()})
	}
}

// add records st, one site per field, object and line: c.n++ and
// c.s = append(c.s, x) read and write the field, and are one write for
// the user. Sites in test files go apart: tests touch internals from one
// goroutine, and are no evidence either way.
func (s *state) add(st site) {
	line := s.p.Pass.Fset.Position(st.pos).Line
	k := siteKey{st.fn, line, st.v, st.obj}
	list := &s.sites
	if s.inTest(st.fn) {
		list = &s.testSites
	}
	if i, ok := s.siteAt[k]; ok {
		(*list)[i].write = (*list)[i].write || st.write
		return
	}
	st.held = maps.Clone(st.held)
	s.siteAt[k] = len(*list)
	*list = append(*list, st)
}

// inTest reports whether fn is in a _test.go file.
func (s *state) inTest(fn *ssa.Function) bool {
	return strings.HasSuffix(s.p.Pass.Fset.Position(fn.Pos()).Filename, "_test.go")
}

type siteKey struct {
	fn   *ssa.Function
	line int
	v    *types.Var
	obj  string
}

// candidate reports whether v is state a directive could govern: not a
// lock, atomic, channel, function or confine.Owner, and not already
// annotated.
func candidate(v *types.Var) bool {
	t := v.Type()
	switch t.Underlying().(type) {
	case *types.Chan, *types.Signature:
		return false
	}
	if lockop.IsLocker(t) || lockop.IsSyncType(t) {
		return false
	}
	n, ok := types.Unalias(t).(*types.Named)
	return !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "github.com/confinelint/confinelint/confine"
}

// constructing reports whether x (or the object x points into) is under
// construction at instr of fn: fn created it and has not yet published
// it, or fn is only ever called on such an object (x is its receiver).
func (s *state) constructing(fn *ssa.Function, x ssa.Value, at ssa.Instruction) bool {
	for range 16 {
		switch a := x.(type) {
		case *ssa.FieldAddr:
			x = a.X
			continue
		case *ssa.IndexAddr:
			x = a.X
			continue
		}
		break
	}
	if a, ok := x.(*ssa.Alloc); ok && !a.Heap {
		return true // a local struct or array whose address never escapes
	}
	if s.ctorOnly[fn] && len(fn.Params) > 0 && objects.Underlying(x) == fn.Params[0] {
		return true
	}
	o := s.ctx.Objects.Origin(fn, x)
	return o != nil && s.ctx.Objects.Private(o, at)
}

// posOf is instr's position, or its function's.
func posOf(fn *ssa.Function, instr ssa.Instruction) token.Pos {
	if instr.Pos().IsValid() {
		return instr.Pos()
	}
	return fn.Pos()
}
