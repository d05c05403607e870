package locks

import (
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// target is one function a call may run, with its parameters and free
// variables as paths of the caller.
type target struct {
	fn       *ssa.Function
	vals     []ssa.Value // the caller's values of the callee's parameters
	bindVals []ssa.Value // the caller's values of the callee's free variables
	// exact: the call runs this function. Otherwise it is one of several
	// candidates (interface implementations, functions stored in a
	// func-typed field): only its acquisition edges are taken.
	exact bool

	// args and binds are vals and bindVals as caller paths, computed on
	// the first rewrite: most calls reach functions with nothing to
	// rewrite, and a path costs a walk and a string.
	args, binds []string
	resolved    bool
}

// rewrite translates a path relative to the callee into the caller's
// terms (see the package-level rewrite).
func (t *target) rewrite(caller *ssa.Function, path string) (string, bool) {
	if !t.resolved {
		t.args, t.binds, t.resolved = pathsOf(caller, t.vals), pathsOf(caller, t.bindVals), true
	}
	return rewrite(path, t.args, t.binds)
}

func pathsOf(fn *ssa.Function, vs []ssa.Value) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = pathOf(fn, v)
	}
	return out
}

// targets resolves the functions a call can run.
func (w *walker) targets(call *ssa.CallCommon) []target {
	// The result reuses the walker's buffer: valid until the next call.
	out := w.targetBuf[:0]
	defer func() { w.targetBuf = out[:0] }()
	if call.IsInvoke() {
		impls := w.e.implementations(call.Method)
		if len(impls) == 0 {
			return nil
		}
		vals := append([]ssa.Value{call.Value}, call.Args...)
		for _, fn := range impls {
			out = append(out, target{fn: fn, vals: vals})
		}
		return out
	}
	switch v := call.Value.(type) {
	case *ssa.Function:
		fn := w.e.canonical(v)
		if m := w.e.thunkMethod(v); m != nil {
			fn = m // (*T).m(x): the thunk's parameters are the method's, receiver first
		}
		out = append(out, target{fn: fn, vals: call.Args, exact: true})
	case *ssa.MakeClosure:
		fn, ok := v.Fn.(*ssa.Function)
		if !ok {
			return nil
		}
		if m := w.e.boundMethod(fn); m != nil && len(v.Bindings) == 1 {
			out = append(out, target{fn: m, vals: append(slices.Clone(v.Bindings), call.Args...), exact: true})
		} else {
			out = append(out, target{fn: w.e.canonical(fn), vals: call.Args, bindVals: v.Bindings, exact: true})
		}
	case *ssa.UnOp:
		// A call of a func-typed field: the package's functions stored in it.
		if fa, ok := v.X.(*ssa.FieldAddr); ok && v.Op == token.MUL {
			for _, fn := range w.e.fieldFuncs[fieldVar(fa)] {
				out = append(out, target{fn: fn, vals: call.Args})
			}
		}
	}
	return out
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

// thunkMethod returns the method a method-expression thunk ((*T).m used as
// a function) calls, or nil.
func (e *engine) thunkMethod(fn *ssa.Function) *ssa.Function {
	if fn.Synthetic == "" || len(fn.FreeVars) != 0 || fn.Signature.Recv() != nil {
		return nil
	}
	obj, ok := fn.Object().(*types.Func)
	if !ok || obj.Signature().Recv() == nil {
		return nil
	}
	if m := fn.Prog.FuncValue(obj.Origin()); m != nil && m != fn {
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
	if w.report {
		w.e.recordClosureCall(w.fn, call, s)
	}
	s = w.handOff(call.Args, s)
	for _, t := range w.targets(call) {
		if w.report && t.exact {
			s = w.checkCallDecl(&t, pos, s)
		}
		sum := w.e.summaryOf(t.fn)
		if sum == nil {
			continue
		}
		// The takes and channel operations change no state: they only
		// make the summary, edges and findings of the final pass.
		if w.final {
			w.callTakes(&t, sum, pos, s)
			for _, op := range sum.chans {
				w.info.addChan(op)
			}
		}
		if !t.exact {
			continue
		}
		for _, r := range sum.releases {
			if p, ok := t.rewrite(w.fn, r.Path); ok {
				if _, held := s.find(p); !held {
					if w.final {
						w.info.addRelease(Hold{Path: p, Class: r.Class, Name: r.Name, Shared: r.Shared})
					}
					s.outer = true
				}
				s = s.without(p)
			}
		}
		for _, a := range sum.acquires {
			if p, ok := t.rewrite(w.fn, a.Path); ok {
				a.Path, a.Pos, a.Maybe, a.Loop = p, pos, false, false
				a.Inferred = !w.e.declaresAcquire(t.fn)
				s = s.with(a)
			}
		}
	}
	return s
}

// callTakes adds to the summary, as taken at pos, what the callee t takes,
// and reports the edges and double locks that makes under s.
func (w *walker) callTakes(t *target, sum *funcInfo, pos token.Pos, s State) {
	if len(sum.takes) == 0 {
		return
	}
	name := w.e.funcName(t.fn)
	step := w.condStep()
	for _, tk := range sum.takes {
		if tk.afterRelease || tk.cond+step > maxCond || tk.Via.len()+1 > maxVia {
			continue
		}
		via := tk.Via.push(name)
		h := Hold{Class: tk.Class, Name: tk.Name, Shared: tk.Shared, Pos: pos, Sub: tk.Sub}
		if h.Sub == "" {
			h.Sub = w.argSub(tk.Path, t.vals)
		}
		if p, ok := t.rewrite(w.fn, tk.Path); ok && t.exact {
			h.Path = p
			// A closure checked under this state reports inside itself.
			inline := t.fn.Parent() != nil && w.e.closureEntry[t.fn] != nil
			// Only a callee that takes the lock on every path to its
			// return is a double lock; one that may take it depends on
			// values the analysis does not follow.
			if old, held := s.find(p); held && w.report && !old.Maybe && !inline && !old.Opaque && tk.cond == 0 {
				w.reportRelock(old, h, pos, " by "+via.text()+" (at "+tk.At+")")
			}
		}
		if w.report {
			w.edgesTo(s, h, pos, via)
		}
		w.info.addTake(take{Path: h.Path, Class: tk.Class, Name: tk.Name, Shared: tk.Shared, Pos: pos, At: tk.At, Via: via, afterRelease: s.outer, cond: tk.cond + step, Sub: h.Sub})
	}
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

// condStep is 0 when the instruction being walked runs on every path to
// the function's return (its block dominates every returning block), 1
// otherwise: one conditional step for the takes it causes.
func (w *walker) condStep() int {
	if w.blk == nil {
		return 1
	}
	if w.retBlocks == nil {
		w.retBlocks = []*ssa.BasicBlock{}
		for _, b := range w.fn.Blocks {
			if b == w.fn.Recover || len(b.Instrs) == 0 {
				continue
			}
			if _, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
				w.retBlocks = append(w.retBlocks, b)
			}
		}
	}
	for _, r := range w.retBlocks {
		if !w.blk.Dominates(r) {
			return 1
		}
	}
	return 0
}

// argSub refines a callee's take of a lock directly in a parameter's
// struct ("p0.mu") by the caller's argument: &c.in passed for the
// parameter makes it the lock under the value field Conn.in.
func (w *walker) argSub(path string, vals []ssa.Value) string {
	root, rest := rootOf(path)
	i := paramIndex(root, "p")
	if i < 0 || i >= len(vals) || strings.Count(rest, ".") != 1 {
		return ""
	}
	return valueFieldSub(vals[i])
}

// valueFieldSub returns the key of the value struct field v addresses
// (v = &x.f with f a struct, not a pointer), "" otherwise.
func valueFieldSub(v ssa.Value) string {
	for range 4 {
		switch x := v.(type) {
		case *ssa.ChangeType:
			v = x.X
			continue
		case *ssa.MakeInterface:
			v = x.X
			continue
		case *ssa.FieldAddr:
			if f := fieldVar(x); f != nil {
				if _, isStruct := f.Type().Underlying().(*types.Struct); isStruct {
					return lockop.ClassKey(f)
				}
			}
		}
		return ""
	}
	return ""
}
