package locks

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// target is one function a call may run, with its parameters and free
// variables as paths of the caller.
type target struct {
	fn    *ssa.Function
	args  []string // caller paths of the callee's SSA parameters
	binds []string // caller paths of the callee's free variables
	// exact: the call runs this function. Otherwise it is one of several
	// candidates (interface implementations, functions stored in a
	// func-typed field): only its acquisition edges are taken.
	exact bool
}

// targets resolves the functions a call can run.
func (w *walker) targets(call *ssa.CallCommon) []target {
	paths := func(vs []ssa.Value) []string {
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = pathOf(w.fn, v)
		}
		return out
	}
	if call.IsInvoke() {
		var out []target
		for _, fn := range w.e.implementations(call.Method) {
			out = append(out, target{fn: fn, args: append([]string{pathOf(w.fn, call.Value)}, paths(call.Args)...)})
		}
		return out
	}
	switch v := call.Value.(type) {
	case *ssa.Function:
		return []target{{fn: w.e.canonical(v), args: paths(call.Args), exact: true}}
	case *ssa.MakeClosure:
		fn, ok := v.Fn.(*ssa.Function)
		if !ok {
			return nil
		}
		if m := w.e.boundMethod(fn); m != nil && len(v.Bindings) == 1 {
			return []target{{fn: m, args: append(paths(v.Bindings), paths(call.Args)...), exact: true}}
		}
		return []target{{fn: w.e.canonical(fn), args: paths(call.Args), binds: paths(v.Bindings), exact: true}}
	case *ssa.UnOp:
		// A call of a func-typed field: the package's functions stored in it.
		if fa, ok := v.X.(*ssa.FieldAddr); ok && v.Op == token.MUL {
			var out []target
			for _, fn := range w.e.fieldFuncs[fieldVar(fa)] {
				out = append(out, target{fn: fn, args: paths(call.Args)})
			}
			return out
		}
	}
	return nil
}

// canonical maps generic instantiations to their origin.
func (e *engine) canonical(fn *ssa.Function) *ssa.Function {
	if o := fn.Origin(); o != nil {
		return o
	}
	return fn
}

// boundMethod returns the method a method-value wrapper ($bound) calls.
func (e *engine) boundMethod(fn *ssa.Function) *ssa.Function {
	if fn.Synthetic == "" || len(fn.FreeVars) != 1 {
		return nil
	}
	obj, ok := fn.Object().(*types.Func)
	if !ok {
		return nil
	}
	if m := fn.Prog.FuncValue(obj.Origin()); m != nil {
		return m
	}
	return nil
}

func fieldVar(fa *ssa.FieldAddr) *types.Var {
	t := fa.X.Type()
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if st, ok := t.Underlying().(*types.Struct); ok && fa.Field < st.NumFields() {
		return st.Field(fa.Field)
	}
	return nil
}

// call applies the effect of a non-lock call.
func (w *walker) call(call *ssa.CallCommon, pos token.Pos, s State) State {
	s = w.handOff(call.Args, s)
	for _, t := range w.targets(call) {
		if w.report && t.exact {
			w.checkCallDecl(t, pos, s)
		}
		sum := w.e.summaryOf(t.fn)
		if sum == nil {
			continue
		}
		name := w.e.funcName(t.fn)
		for _, tk := range sum.takes {
			if tk.afterRelease {
				continue
			}
			h := Hold{Class: tk.Class, Name: tk.Name, Shared: tk.Shared, Pos: pos}
			if p, ok := rewrite(tk.Path, t.args, t.binds); ok && t.exact {
				h.Path = p
				// A closure checked under this state reports inside itself.
				inline := t.fn.Parent() != nil && w.e.closureEntry[t.fn] != nil
				if old, held := s.find(p); held && w.report && !old.Maybe && !inline && !old.Opaque {
					w.reportRelock(old, h, pos, " by "+chainText(name, tk.Via)+" (at "+tk.At+")")
				}
			}
			if w.report {
				w.edgesTo(s, h, pos, append([]string{name}, tk.Via...))
			}
			w.info.addTake(take{Path: h.Path, Class: tk.Class, Name: tk.Name, Shared: tk.Shared, Pos: pos, At: tk.At, Via: append([]string{name}, tk.Via...), afterRelease: s.outer})
		}
		for _, op := range sum.chans {
			w.info.addChan(op)
		}
		if !t.exact {
			continue
		}
		for _, r := range sum.releases {
			if p, ok := rewrite(r.Path, t.args, t.binds); ok {
				if _, held := s.find(p); !held {
					w.info.addRelease(Hold{Path: p, Class: r.Class, Name: r.Name, Shared: r.Shared})
					s.outer = true
				}
				s = s.without(p)
			}
		}
		for _, a := range sum.acquires {
			if p, ok := rewrite(a.Path, t.args, t.binds); ok {
				a.Path, a.Pos, a.Maybe, a.Loop = p, pos, false, false
				s = s.with(a)
			}
		}
	}
	return s
}

func chainText(name string, via []string) string {
	out := name
	for _, v := range via {
		out += " -> " + v
	}
	return out
}

// handOff applies the releases of closures passed to a call or returned:
// a closure (or method value) that unlocks the caller's lock, given to a
// call (a completion callback) or returned (a release func), takes that
// unlock over, so the lock no longer counts as held here (nor as
// definitely released).
func (w *walker) handOff(vals []ssa.Value, s State) State {
	for _, a := range vals {
		if ct, ok := a.(*ssa.ChangeType); ok { // a named func type
			a = ct.X
		}
		mc, ok := a.(*ssa.MakeClosure)
		if !ok {
			continue
		}
		fn := mc.Fn.(*ssa.Function)
		binds := make([]string, len(mc.Bindings))
		for i, b := range mc.Bindings {
			binds[i] = pathOf(w.fn, b)
		}
		var args []string
		if m := w.e.boundMethod(fn); m != nil {
			fn, args, binds = m, binds, nil
		}
		sum := w.e.summaryOf(fn)
		if sum == nil {
			continue
		}
		for _, r := range sum.releases {
			if p, ok := rewrite(r.Path, args, binds); ok {
				if _, held := s.find(p); held {
					s = s.without(p)
					s.released = remove(s.released, p)
				}
			}
		}
	}
	return s
}
