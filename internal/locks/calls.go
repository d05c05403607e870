package locks

import (
	"go/token"
	"go/types"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// target is one function a call may run, with its parameters and free
// variables as paths of the caller.
type target struct {
	fn       *ssa.Function
	vals     []ssa.Value // the values of the callee's parameters
	bindVals []ssa.Value // the values of the callee's free variables
	// owner is the function vals and bindVals live in when it is not the
	// caller: an enclosing function whose closure is called here through a
	// captured variable. creator is the function that made the closure
	// called (nil for other callees): the callee's outer paths ("o:")
	// name that function's objects.
	owner, creator *ssa.Function
	// exact: the call runs this function. Otherwise it is one of several
	// candidates (interface implementations, functions stored in a
	// func-typed field): only its acquisition edges are taken.
	exact bool
	// dynamic: the call is of a func value or an interface method, not
	// of a function named at the call.
	dynamic bool
	// several: the call may run one of several functions (interface
	// implementations, funcs stored in one place); fn is one of them.
	several bool
	// sum, when set, is the summary to apply instead of fn's (the effects
	// every candidate of an interface call shares), and label names the
	// call in chains instead of fn. cond counts conditional steps the
	// call itself adds (a String method a log handler may call): its
	// takes are that much less certain and its effects are not applied.
	sum   *funcInfo
	label string
	cond  int

	// args and binds are vals and bindVals as caller paths, computed on
	// the first rewrite: most calls reach functions with nothing to
	// rewrite, and a path costs a walk and a string.
	args, binds []string
	resolved    bool
	objs        *objects.Index
	at          ssa.Instruction // the call
}

// rewrite translates a path relative to the callee into the caller's
// terms (see the package-level rewrite).
func (t *target) rewrite(caller *ssa.Function, path string) (string, bool) {
	if !t.resolved {
		t.args, t.binds, t.resolved = t.pathsOf(caller, t.vals), t.pathsOf(caller, t.bindVals), true
	}
	if inner, ok := objects.Outer(path); ok {
		if t.creator == nil {
			return "", false
		}
		p := t.objs.PathIn(caller, t.creator, inner)
		return p, p != ""
	}
	// A lock of an argument built here around a named value:
	// (&API{c: c}).get() locks c's lock.
	root, rest := rootOf(path)
	if i := paramIndex(root, "p"); i >= 0 && i < len(t.vals) && t.vals[i] != nil && t.vals[i].Parent() == caller {
		if p, ok := objects.Through(caller, t.vals[i], rest, t.at); ok {
			return p, true
		}
	}
	return rewrite(path, t.args, t.binds)
}

func (t *target) pathsOf(caller *ssa.Function, vs []ssa.Value) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		if v == nil {
			continue // not known: the path cannot be said
		}
		if t.owner != nil && t.owner != caller && v.Parent() == t.owner {
			out[i] = t.objs.PathFrom(caller, t.owner, v)
		} else {
			out[i] = pathOf(caller, v)
		}
	}
	return out
}

// targets resolves the functions a call can run.
func (w *walker) targets(call *ssa.CallCommon) []target {
	// The result reuses the walker's buffer: valid until the next call.
	out := w.targetBuf[:0]
	defer func() { w.targetBuf = out[:0] }()
	if call.IsInvoke() {
		out = w.invokeTargets(call, out)
		if len(out) == 1 && out[0].exact {
			// The one implementation, a logger that formats its operands.
			out = w.e.formatted(out[0].vals, out)
		}
		out = w.e.formattedInvoke(call, out)
	} else {
		out = w.valueTargets(out, w.fn, call.Value, call.Args)
		if len(out) == 1 && out[0].exact {
			out = w.e.formatted(call.Args, out)
		}
	}
	if call.StaticCallee() == nil {
		for i := range out {
			out[i].dynamic = true
		}
	}
	return w.atCall(out)
}

// invokeTargets resolves an interface call: the method of the dynamic
// type when the value is a conversion of a concrete one (var d Doer = c),
// else the package's implementations; one candidate is the callee.
func (w *walker) invokeTargets(call *ssa.CallCommon, out []target) []target {
	vals := append([]ssa.Value{call.Value}, call.Args...)
	if fn := w.e.devirtualize(call); fn != nil {
		return append(out, target{fn: fn, vals: vals, exact: true})
	}
	impls := w.e.passedImplementations(call, w.e.storedImplementations(call, w.e.implementations(call)))
	for _, fn := range impls {
		out = append(out, target{fn: fn, vals: vals, exact: len(impls) == 1, several: len(impls) > 1})
	}
	return out
}

// storedImplementations keeps, of an interface call's candidates, the
// methods of the types the package stores into the field the call's value
// is read from, when those are known (objects.FieldTypes): a queue whose
// sink field only ever holds an *httpSink does not call the broadcaster's
// Close, though the broadcaster is a Sink too.
// For another package's interface (an io.Writer field), whose
// implementations are not looked for, they are those types' methods when
// each is a source method of the package (methodsOf).
func (e *engine) storedImplementations(call *ssa.CallCommon, impls []*ssa.Function) []*ssa.Function {
	ld, ok := call.Value.(*ssa.UnOp)
	if !ok || ld.Op != token.MUL || len(impls) == 1 {
		return impls
	}
	fa, ok := ld.X.(*ssa.FieldAddr)
	if !ok {
		return impls
	}
	if len(impls) == 0 {
		if dynamic, ok := e.objs.FieldTypes(lockop.FieldOf(fa)); ok {
			return e.methodsOf(call.Method, dynamic, impls)
		}
		return impls
	}
	return e.storedIn(lockop.FieldOf(fa), impls)
}

// passedImplementations is, for an interface call made on a parameter,
// the methods of the types the package passes for it, when those are
// known (objects.ParamTypes) and each is a source method of the
// package: RecordError(err error) called with a *queryError only runs
// queryError's Error, though error is no interface of the package (whose
// implementations are not looked for). impls otherwise.
func (e *engine) passedImplementations(call *ssa.CallCommon, impls []*ssa.Function) []*ssa.Function {
	p, ok := objects.Underlying(call.Value).(*ssa.Parameter)
	if !ok {
		return impls
	}
	dynamic, ok := e.objs.ParamTypes(p)
	if !ok {
		return impls
	}
	return e.methodsOf(call.Method, dynamic, impls)
}

// methodsOf is the methods m of the types dynamic, when each is a source
// method of the package; fallback otherwise (a promoted method, or
// another package's, is not seen).
func (e *engine) methodsOf(m *types.Func, dynamic []types.Type, fallback []*ssa.Function) []*ssa.Function {
	if len(dynamic) == 0 {
		return fallback
	}
	prog := e.p.SSA.Pkg.Prog
	var out []*ssa.Function
	for _, t := range dynamic {
		sel := prog.MethodSets.MethodSet(t).Lookup(m.Pkg(), m.Name())
		if sel == nil {
			return fallback
		}
		fn := prog.MethodValue(sel)
		if fn == nil || fn.Synthetic != "" || !e.p.FuncSet[fn] {
			return fallback
		}
		if fn = e.canonical(fn); !slices.Contains(out, fn) {
			out = append(out, fn)
		}
	}
	return out
}

// storedIn keeps, of impls, the methods of the types the package stores
// into interface field f, when those are known (objects.FieldTypes).
func (e *engine) storedIn(f *types.Var, impls []*ssa.Function) []*ssa.Function {
	dynamic, ok := e.objs.FieldTypes(f)
	if !ok {
		return impls
	}
	return keepMethodsOf(dynamic, impls)
}

// keepMethodsOf keeps, of impls, the methods of the types dynamic.
func keepMethodsOf(dynamic []types.Type, impls []*ssa.Function) []*ssa.Function {
	return slices.DeleteFunc(slices.Clone(impls), func(fn *ssa.Function) bool {
		recv := fn.Signature.Recv().Type()
		return !slices.ContainsFunc(dynamic, func(t types.Type) bool {
			return types.Identical(t, recv) || types.Identical(t, types.NewPointer(recv))
		})
	})
}

// devirtualize returns the method an interface call runs when its value
// is a conversion of a concrete type whose method is a source function
// (not a promotion wrapper, whose receiver paths would be another
// object's), or nil.
func (e *engine) devirtualize(call *ssa.CallCommon) *ssa.Function {
	t := objects.Underlying(call.Value).Type()
	if types.IsInterface(t) {
		return nil
	}
	prog := e.p.SSA.Pkg.Prog
	sel := prog.MethodSets.MethodSet(t).Lookup(call.Method.Pkg(), call.Method.Name())
	if sel == nil {
		return nil
	}
	fn := prog.MethodValue(sel)
	if fn == nil || fn.Synthetic != "" {
		return nil
	}
	fn = e.canonical(fn)
	if e.summaryOf(fn) == nil {
		return nil
	}
	return fn
}

// valueTargets resolves a call of the func value v of function from: the
// function or closure it is (a closure held in a variable, possibly the
// enclosing function's, is the closure itself), else, edges only, the
// functions the value may hold (objects.FuncsOf). A parameter or free
// variable of the walked function resolves to nothing: its callers know
// the function (paramCall).
func (w *walker) valueTargets(out []target, from *ssa.Function, v ssa.Value, args []ssa.Value) []target {
	if held := objects.CalledCell(v); held != nil {
		v = held // unlock() with unlock := func() { mu.Unlock() }
	}
	owner, callee := w.e.objs.Resolve(from, v)
	if owner == w.fn {
		owner = nil
	}
	switch v := callee.(type) {
	case *ssa.Function:
		fn := w.e.canonical(v)
		if m := w.e.thunkMethod(v); m != nil {
			fn = m // (*T).m(x): the thunk's parameters are the method's, receiver first
		}
		return append(out, target{fn: fn, vals: args, exact: true})
	case *ssa.MakeClosure:
		fn, ok := v.Fn.(*ssa.Function)
		if !ok {
			return out
		}
		if m := w.e.boundMethod(fn); m != nil && len(v.Bindings) == 1 {
			return append(out, target{fn: m, vals: append(slices.Clone(v.Bindings), args...), owner: owner, exact: true, objs: w.e.objs})
		}
		return append(out, target{fn: w.e.canonical(fn), vals: args, bindVals: v.Bindings, owner: owner, creator: v.Parent(), exact: true, objs: w.e.objs})
	case *ssa.Call:
		if t, ok := w.returnedClosure(v, args, owner); ok {
			return append(out, t)
		}
	}
	if w.calledParam(from, v) != "" {
		return out
	}
	if one := w.livePhiEdge(from, v); one != nil {
		return w.valueTargets(out, from, one, args)
	}
	fns := w.e.funcsOf(from, v)
	if len(fns) > maxCandidates {
		return out
	}
	fa := fieldLoad(v)
	// A field defaulted to a no-op (`onAdd: func(string) {}`) and set by
	// an option to one function runs that function once it is set: one
	// conditional step, as the option may not be given.
	var installed int
	if fa != nil && len(fns) > 1 {
		if one := withoutNoops(fns); len(one) == 1 {
			fns, installed = one, 1
		}
	}
	for _, fn := range fns {
		if fa != nil {
			// A callback called through the field of the object it
			// captured runs with that object (selfbound.go).
			t := w.fieldTarget(fn, fa, args, len(fns) == 1)
			t.several = len(fns) > 1
			t.cond += installed
			out = append(out, t)
			continue
		}
		// The one function a container's elements ever hold is the
		// callee, as for a field (a hook appended by a setter); so is
		// the one a package var ever holds (`fsNewFs = NewFs`), and
		// the one a local variable closures capture ever holds.
		exact := len(fns) == 1 && (w.e.objs.IsElement(from, v) || globalLoad(v) || w.e.objs.LocalCell(from, v))
		out = append(out, target{fn: fn, vals: candidateArgs(fn, args), exact: exact, several: len(fns) > 1})
	}
	return out
}

// livePhiEdge returns the one value a phi of the walked function can have
// here, when the walk found its other edges impossible (a summary
// specialized by `GetLeaderStatus(false)` reaching `leader :=
// c.leaderLocked; if lock { leader = c.Leader }; leader()`); nil
// otherwise.
func (w *walker) livePhiEdge(from *ssa.Function, v ssa.Value) ssa.Value {
	phi, ok := v.(*ssa.Phi)
	if !ok || from != w.fn || phi.Parent() != w.fn || w.dead == nil {
		return nil
	}
	b := phi.Block()
	var live ssa.Value
	for i, p := range b.Preds {
		if !w.seen[p.Index] || w.dead[[2]int{p.Index, b.Index}] {
			continue
		}
		if live != nil && live != phi.Edges[i] {
			return nil
		}
		live = phi.Edges[i]
	}
	if live == phi {
		return nil
	}
	return live
}

// globalLoad reports whether v is read from a package var.
func globalLoad(v ssa.Value) bool {
	u, ok := v.(*ssa.UnOp)
	if !ok || u.Op != token.MUL {
		return false
	}
	_, ok = u.X.(*ssa.Global)
	return ok
}

// returnedClosure resolves a call of the func value call returns when
// the callee, a package function, returns one closure on every path (an
// iterator factory: `func (c *Cache) All() iter.Seq2[K, V] { return
// func(yield ...) { c.mu.RLock() ... } }`, ranged over or called): that
// closure runs, its captured parameters being the call's arguments.
func (w *walker) returnedClosure(call *ssa.Call, args []ssa.Value, owner *ssa.Function) (target, bool) {
	f := call.Call.StaticCallee()
	if f == nil {
		return target{}, false
	}
	if f = w.e.canonical(f); !w.e.p.FuncSet[f] {
		return target{}, false
	}
	var mc *ssa.MakeClosure
	for _, r := range objects.ReturnedValues(f) {
		c, ok := objects.Underlying(r).(*ssa.MakeClosure)
		if !ok || mc != nil && c != mc {
			return target{}, false
		}
		mc = c
	}
	if mc == nil {
		return target{}, false
	}
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return target{}, false
	}
	binds := make([]ssa.Value, len(mc.Bindings))
	for i, b := range mc.Bindings {
		if p, ok := cellValue(b).(*ssa.Parameter); ok && p.Parent() == f { // a captured receiver is spilled to a cell
			binds[i] = objects.CallArg(&call.Call, slices.Index(f.Params, p))
		}
	}
	return target{fn: w.e.canonical(fn), vals: args, bindVals: binds, owner: owner, exact: true, objs: w.e.objs}, true
}

// withoutNoops is fns without the functions that do nothing (a body that
// only returns, with no results).
func withoutNoops(fns []*ssa.Function) []*ssa.Function {
	var out []*ssa.Function
	for _, fn := range fns {
		if len(fn.Blocks) != 1 || len(fn.Blocks[0].Instrs) != 1 || fn.Signature.Results().Len() > 0 {
			out = append(out, fn)
		}
	}
	return out
}

// fieldLoad is the field address v loads from (x.F), or nil.
func fieldLoad(v ssa.Value) *ssa.FieldAddr {
	if u, ok := objects.Underlying(v).(*ssa.UnOp); ok && u.Op == token.MUL {
		fa, _ := u.X.(*ssa.FieldAddr)
		return fa
	}
	return nil
}

// funcsOf lists the package functions a func value may hold, method
// values and method expressions as their methods (objects.FuncsOf).
func (e *engine) funcsOf(from *ssa.Function, v ssa.Value) []*ssa.Function {
	var out []*ssa.Function
	for _, f := range e.objs.FuncsOf(from, v) {
		if m := e.boundMethod(f); m != nil {
			f = m
		} else if m := e.thunkMethod(f); m != nil {
			f = m // (*T).m stored as a func: the method, receiver first
		}
		if f = e.canonical(f); e.p.FuncSet[f] && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// atCall marks targets with the call instruction being walked.
func (w *walker) atCall(ts []target) []target {
	for i := range ts {
		ts[i].at = w.at
	}
	return ts
}

// name names the callee in call chains.
func (t *target) name(e *engine) string {
	if t.label != "" {
		return t.label
	}
	return e.funcName(t.fn)
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

// call applies the effect of a non-lock call.
func (w *walker) call(call *ssa.CallCommon, pos token.Pos, s State) State {
	if !call.IsInvoke() && call.StaticCallee() == nil {
		if edges := w.e.nilEdgesOf(w.fn, call.Value); edges != nil {
			w.nilGuard = edges
			defer func() { w.nilGuard = nil }()
		}
	}
	if w.report {
		w.e.recordClosureCall(w.fn, call, s)
	}
	s = w.runReleasers(call, pos, s)
	s = w.handOff(call.Args, s, false)
	w.recordDispatch(call, pos, s)
	ts := w.targets(call)
	if len(ts) == 0 && !call.IsInvoke() {
		w.recordParamCall(call, pos, s)
	}
	w.recordFormatCall(call, pos, s)
	if len(ts) == 0 && call.IsInvoke() {
		s = w.handleMayRelease(call, s)
	}
	ts = w.withCommonEffects(ts, call)
	ts = w.withCommonClassTakes(ts, call)
	if w.report {
		for _, t := range ts {
			w.noteCallSite(t.fn, s.holds)
		}
	}
	for _, t := range ts {
		if w.report && t.exact && t.sum == nil {
			s = w.checkCallDecl(&t, pos, s)
		}
		w.calleeDispatches(&t, pos, s)
		sum := w.summaryFor(&t, s)
		// The takes and channel operations change no state: they only
		// make the summary, edges and findings of the final pass.
		if w.final {
			w.callParams(&t, sum, pos, s)
		}
		if sum == nil {
			continue
		}
		if w.final {
			w.callTakes(&t, sum, pos, s)
			for _, op := range sum.chans {
				op.Before = union(op.Before, s.took)
				w.info.addChan(op)
			}
			w.callBlocks(&t, sum, pos, s)
		}
		if !t.exact {
			s = w.mayRelease(&t, sum, s)
		}
		for _, tk := range sum.takes {
			s = s.taking(tk.Class)
		}
		if t.exact && w.final {
			// What the callee lets go of at some point, we do: a
			// goroutine started on us takes it over (handedOver).
			for _, u := range sum.unlocks {
				if p, ok := w.calleePath(&t, u.Path); ok && portable(p) {
					w.info.addUnlock(byClass(Hold{Path: p, Class: u.Class, Name: u.Name, Shared: u.Shared}))
				}
			}
		}
		if !t.exact || t.cond > 0 {
			continue
		}
		for _, r := range sum.releases {
			if p, ok := w.calleePath(&t, r.Path); ok {
				if o, ok := s.underOtherName(Hold{Path: p, Class: r.Class}); ok {
					p = o.Path
				}
				w.noteUnlock(p, pos)
				if _, held := s.find(p); !held {
					if w.final {
						h := byClass(Hold{Path: p, Class: r.Class, Name: r.Name, Shared: r.Shared, Keyed: r.Keyed || w.keyedArg(&t, r)})
						w.info.addRelease(h)
						w.info.addUnlock(h)
					}
					s = s.releasedOuter(p)
				}
				s = s.without(p)
			}
		}
		if c, ok := w.at.(*ssa.Call); ok && len(sum.tries) > 0 {
			s = w.applyTryAcquires(&t, sum, c, s)
		}
		if c, ok := w.at.(*ssa.Call); ok && len(sum.releaseFuncs) > 0 {
			s = w.applyReleaseFuncs(&t, sum, c, s)
		}
		_, tryWrapped := w.e.tryWrapper(t.fn)
		for _, a := range sum.acquires {
			if tryWrapped {
				break // held on the branch where it reports true (edgeState)
			}
			if p, ok := w.calleePath(&t, a.Path); ok {
				p = keyedAt(p, pos)
				if !a.leaf.IsValid() {
					a.leaf = a.Pos // the callee's own Lock, or nothing from facts
				}
				a.Keyed = a.Keyed || w.keyedArg(&t, a)
				a.Path, a.Pos, a.Maybe, a.Loop, a.Obj = p, pos, false, false, w.calleeObj(&t, a.Path)
				a.Inferred = !w.e.declaresAcquire(t.fn)
				w.noteSliceOrder(a, call.Args, s)
				s = s.with(a)
			}
		}
		if c, ok := w.at.(*ssa.Call); ok && tryWrapped && w.resultDiscarded() {
			if h, ok := w.wrapperTryHold(c); ok {
				h.Try = false // taken for a plain lock by its caller
				s = s.with(h)
			}
		}
	}
	return s
}

// mayRelease forgets the locks a candidate of a call (an interface
// method among several) releases: held or not afterwards depends on which
// runs. Kept, a lock one candidate acquired (kv.Read()) would stay held
// past the release another one makes (txn.End()), a leak no program has.
func (w *walker) mayRelease(t *target, sum *funcInfo, s State) State {
	for _, r := range sum.releases {
		p, ok := w.calleePath(t, r.Path)
		if !ok {
			continue
		}
		if o, ok := s.underOtherName(Hold{Path: p, Class: r.Class}); ok {
			p = o.Path
		}
		if _, held := s.find(p); held {
			s = s.without(p)
		}
	}
	return s
}

// handleMayRelease forgets the locks a call left held when a method of
// the handle it returned is called through an interface the analysis
// cannot resolve (declared in another package): the handle's Finish or
// Rollback may be what releases them (cc, _ := m.Start(); cc.Finish()).
func (w *walker) handleMayRelease(call *ssa.CallCommon, s State) State {
	var from *ssa.Call
	switch v := objects.Underlying(call.Value).(type) {
	case *ssa.Call:
		from = v
	case *ssa.Extract:
		from, _ = v.Tuple.(*ssa.Call)
	}
	if from == nil {
		return s
	}
	for _, h := range s.holds {
		if h.Pos == from.Pos() && !h.Maybe {
			s = s.without(h.Path)
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
	name := t.name(w.e)
	step, stepBranch := w.condStep()+t.cond, w.branchStep()+t.cond
	// A take reached through a function of a _test.go file (a test's
	// fake behind a production interface) exists in test builds only.
	viaTest := w.e.inTest(t.fn.Pos())
	var failure func() (string, string) // the call's own failure branch, if any
	if stepBranch > 0 && t.cond == 0 {
		failure = sync.OnceValues(w.failureHere)
	}
	// A call made only where a parameter is nil (`if tx == nil {
	// db.Update(fn) } else { fn(tx) }`: open a transaction unless given
	// one) is decided by what the caller passes (take.nilPath).
	nilHere := ""
	if stepBranch > 0 && t.cond == 0 {
		nilHere = w.nilSideParam()
	}
	for _, tk := range sum.takes {
		tk.test = tk.test || viaTest
		next := take{cond: tk.cond + step, loose: tk.loose || !t.exact, several: tk.several || t.several, leafSure: tk.leafSure && t.exact && !tk.loose}
		// The callee's nil condition in this function's terms: its
		// parameter passed on, or never met here (passedNil).
		passed, never := "", false
		if tk.nilPath != "" {
			passed, never = w.passedNil(t.vals, tk.nilPath, s)
		}
		nilPath := nilHere
		if nilHere == "" {
			nilPath = passed
		}
		if nilHere == "" && never || nilPath != "" && w.e.nilFromNoCaller(w.fn, nilPath, 0) {
			continue // taken only where a value is nil that is never nil here
		}
		// Taken only where the caller's callers pass nil, or never: not
		// this caller's choice to call.
		sure := relockSomePaths(tk, t) && passed == "" && !never
		// Beyond the bounds a take goes no further up, but a certain
		// leaf within them is still checked against what is held here.
		// A loop run on every path is no condition for the bound: a
		// callback list walked under a lock reaches each callback.
		over := tk.branch+stepBranch > maxCond || tk.Via.len()+1 > next.viaBound()
		// Past maxVia, a take sure at its leaf goes on up for the double
		// lock only (take.deep).
		deep := over && next.cond <= maxCond && next.leafSure && tk.Via.len()+1 <= maxMustVia
		if over && !deep && !(tk.leafSure && tk.cond <= maxCond && tk.Via.len() < maxVia) {
			continue
		}
		via := tk.Via.push(name)
		dynBranch := tk.dynBranch || t.dynamic && tk.branch > 0 && w.e.branchesOnArgs(t.fn, tk.Pos)
		// Every branch of the callee's down to the take a failure.
		failOnly := tk.failed != "" && tk.branch > 0 && t.cond == 0 && t.exact && !tk.loose
		h := Hold{Class: tk.Class, Name: tk.Name, Shared: tk.Shared, Pos: pos, Sub: tk.Sub, Fresh: tk.fresh, leaf: tk.leaf}
		if h.Sub == "" {
			h.Sub = w.argSub(tk.Path, t.vals)
		}
		h.elemOf = w.calleeElemOf(t, tk)
		h.writerAlong = tk.Shared && (tk.writerAlong || writesToo(sum, tk))
		if tk.afterRelease {
			w.retakeEdges(t, tk, h, pos, via, s)
			if rel, ok := w.releasedAbove(t, tk, s); ok && !over {
				w.info.addTake(take{Path: h.Path, Class: tk.Class, Name: tk.Name, Shared: tk.Shared, Pos: pos, At: tk.At, leaf: tk.leaf, Via: via, afterRelease: true, released: rel, cond: next.cond, loose: next.loose, several: next.several, test: tk.test, Sub: h.Sub, fresh: tk.fresh})
			}
			continue
		}
		if p, ok := w.calleePath(t, tk.Path); ok && t.exact {
			h.Path, h.Obj = p, w.calleeObj(t, tk.Path)
			// A closure checked under this state reports inside itself.
			inline := t.fn.Parent() != nil && w.e.closureEntry[t.fn] != nil
			// Only a callee that takes the lock on every path to its
			// return is a double lock; one that may take it depends on
			// values the analysis does not follow.
			// A lock maybe-held over the loop's back-edge and taken for
			// sure again is a re-lock on the next iteration (as for a
			// direct Lock), when this function unlocks it somewhere or
			// took it through a helper.
			old, held := s.find(p)
			loop := old.Maybe && old.Loop && w.relockedNextTurn(old)
			if held && w.report && (!old.Maybe || loop || w.heldToReturn(old)) && !inline && !old.Opaque && tk.branch+t.cond == 0 {
				w.reportRelock(old, h, pos, " by "+via.text()+" (at "+tk.At+")")
			} else if held && w.report && !old.Maybe && !inline && !old.Opaque && failOnly && !w.failedOnHeld(tk, t, old) {
				w.reportRelock(old, h, pos, " by "+via.text()+" (at "+tk.At+failedText(tk, t)+")")
			} else if held && w.report && !old.Maybe && !inline && !old.Opaque && sure && !w.writesShared(old.Pos, pos, via) {
				w.reportRelock(old, h, pos, " by "+via.text()+" (at "+tk.At+", on the paths that call "+via.last()+")")
			} else if c, same := w.sameCondition(old, tk, t); held && w.report && same && !inline && !old.Opaque {
				old.Maybe = false
				w.reportRelock(old, h, pos, " by "+via.text()+" (at "+tk.At+"), taken there as here only where "+condText(c)+",")
			} else if c, ok := w.decidedHere(tk, t, s); held && w.report && ok && !old.Maybe && !inline && !old.Opaque {
				w.reportRelock(old, h, pos, " by "+via.text()+" (at "+tk.At+"), taken there where "+w.decidedText(c, s)+",")
			} else if old, why := w.copiedAlias(s, h); !held && why != "" && w.report && !inline && (tk.branch+t.cond == 0 || failOnly && !w.failedOnHeld(tk, t, old) || sure && !dynBranch && !w.writesShared(old.Pos, pos, via)) {
				w.reportRelock(old, h, pos, " by "+via.text()+" (at "+tk.At+failedText(tk, t)+")"+why)
			}
		} else if t.exact && w.report && !tk.afterRelease {
			// A path the caller cannot name (a receiver bound where a
			// callback was registered, a value behind an accessor) may
			// still be the held lock: the one object of its type. On
			// some paths only when no callback's own branch decides.
			inline := t.fn.Parent() != nil && w.e.closureEntry[t.fn] != nil
			somePaths := sure && !dynBranch
			if old, why := w.singletonHeld(s, h); why != "" && !inline && (tk.branch+t.cond == 0 || failOnly && !w.failedOnHeld(tk, t, old) || somePaths && !w.writesShared(old.Pos, pos, via)) {
				w.reportRelock(old, h, pos, " by "+via.text()+" (at "+tk.At+failedText(tk, t)+")"+why)
			}
		}
		if over && !deep {
			continue
		}
		if w.report && !deep {
			w.edgesTo(s, h, pos, via, t.exact && tk.eachTurn(), tk.test)
			w.candidateTreeSteps(t, tk, h, s, pos, via)
		}
		nt := take{Path: h.Path, Class: tk.Class, Name: tk.Name, Shared: tk.Shared, Pos: pos, At: tk.At, leaf: tk.leaf, Via: via, afterRelease: s.outer, released: s.outerRel, cond: next.cond, own: step - t.cond, branch: tk.branch + stepBranch, ownBranch: stepBranch - t.cond, loose: next.loose, several: next.several, test: tk.test, Sub: h.Sub, elemOf: h.elemOf, fresh: tk.fresh || w.private(h), leafSure: next.leafSure, deep: deep, dynBranch: dynBranch, writerAlong: h.writerAlong, nilPath: nilPath}
		w.failedTake(&nt, tk, t, failure)
		if c, ok := w.whenInCaller(t, tk.when); ok && t.exact && (stepBranch == 0 || stepBranch == 1 && w.onlyHere(c)) {
			nt.when = &c
		}
		w.info.addTake(nt)
		w.noteSite(nt)
	}
}

// relockSomePaths reports whether callee t's take tk of a lock the caller
// holds is a double lock although it is conditional: the function that
// takes the lock takes it on every path, and only the choice to call it,
// in static calls down from here, depends on a branch. A function that
// locks on some paths tests its own state (a cache miss, a closed flag,
// an alreadyLocked parameter); a caller that calls an always-locking
// function on some branch (a bucket split calling the exported
// NPeersForCpl, a stale entry calling the exported Status) deadlocks
// whenever that branch runs. Interface and func-value candidates stay
// edges only: which one runs is not known.
func relockSomePaths(tk take, t *target) bool {
	return tk.leafSure && t.exact && !tk.loose && tk.cond <= maxCond
}

// writesShared reports whether the walked function stores a constant
// into a field of an object it did not create, or into a package
// variable, between from and to (source positions; from outside the
// function counts from its start), that the callee's branches may test:
// with the lock held it may be setting the very state that rules out the
// callee's branch (`r.dirty = false; r.refreshIfDirty()`, `r.names =
// nil`). A computed value (a counter's increment) sets no such state,
// and neither does a field no condition on the way to the take reads
// (via: etcd's Restore resetting compactMainRev before restore resumes
// a compaction it read from the backend; condreads.go).
func (w *walker) writesShared(from, to token.Pos, via *callChain) bool {
	if from < w.fn.Pos() || from > to {
		from = w.fn.Pos()
	}
	for _, b := range w.fn.Blocks {
		for _, instr := range b.Instrs {
			st, ok := instr.(*ssa.Store)
			if !ok || st.Pos() <= from || st.Pos() >= to {
				continue
			}
			if _, isConst := st.Val.(*ssa.Const); !isConst {
				continue
			}
			switch a := st.Addr.(type) {
			case *ssa.Global:
				if w.e.condReads(via, a.Object()) {
					return true
				}
			case *ssa.FieldAddr:
				_, local := a.X.(*ssa.Alloc)
				if f := lockop.FieldOf(a); !local && (f == nil || w.e.condReads(via, f)) {
					return true
				}
			}
		}
	}
	return false
}

// retakeEdges records the edges of a callee's take made after it released
// some of the caller's locks (s.mu.Unlock(); ...; s.mu.Lock() under the
// caller's item.mu): every lock the caller holds that the callee did not
// release is held at the retake. Such takes go no further up: the
// caller's caller may hold what was released.
func (w *walker) retakeEdges(t *target, tk take, h Hold, pos token.Pos, via *callChain, s State) {
	if !w.report || !t.exact || len(tk.released) == 0 {
		return
	}
	for _, r := range tk.released {
		p, ok := w.calleePath(t, r)
		if !ok {
			return // the callee released a lock the caller cannot name
		}
		// A retake from further down (releasedAbove) orders against the
		// function that holds the released lock, not one that only
		// assumes its caller does: that one may hold it under another
		// name (pebble's versionSet.mu is the DB's mutex).
		if _, held := s.find(p); !held && tk.Via.len() > 0 {
			return
		}
		s = s.drop(p)
	}
	if p, ok := w.calleePath(t, tk.Path); ok {
		h.Path, h.Obj = p, w.calleeObj(t, tk.Path)
	}
	w.edgesTo(s, h, pos, via, tk.cond == 0, tk.test)
}

// releasedAbove maps the caller's locks a callee's retake follows the
// release of (tk.released) to the walked function's paths, when none is
// held here: then they are its own caller's too, and the retake goes up
// as one (devicemapper's DeleteDevice -> deleteDevice ->
// removeDeviceAndWait, which unlocks and relocks the DeviceSet while
// DeleteDevice holds a device's lock). A lock held here is released and
// retaken inside this function's own hold: its callers see that hold.
func (w *walker) releasedAbove(t *target, tk take, s State) ([]string, bool) {
	if !t.exact || len(tk.released) == 0 {
		return nil, false
	}
	rel := make([]string, 0, len(tk.released))
	for _, r := range tk.released {
		p, ok := w.calleePath(t, r)
		if _, held := s.find(p); !ok || held {
			return nil, false
		}
		rel = append(rel, p)
	}
	return rel, true
}

// handOff applies the releases of closures passed to a call or returned:
// a closure (or method value) that unlocks the caller's lock, given to a
// call (a completion callback) or returned (a release func), takes that
// unlock over, so the lock no longer counts as held here (nor as
// definitely released).
//
// A goroutine started on it (started) takes over every unlock of the
// caller's lock it makes at some point, also one it takes again after:
// the goroutine of a semaphore (h.Unlock(); h.Lock() in its loop) holds
// the caller's h from then on.
func (w *walker) handOff(vals []ssa.Value, s State, started bool) State {
	for _, a := range withStoredFuncs(vals) {
		mc, ok := objects.Underlying(a).(*ssa.MakeClosure) // through a named func type, a variable
		if !ok {
			continue
		}
		// The lock's own method value (`return c.mu.Unlock`) hands the
		// unlock over as a closure calling it does.
		if op, l := w.e.boundMethodOp(mc); releases(op) {
			s = s.handedOff(pathOf(w.fn, l))
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
		for _, r := range sum.handedOver(started) {
			p, ok := rewrite(r.Path, args, binds)
			if inner, outer := objects.Outer(r.Path); outer {
				p, ok = inner, true // the closure was made here
			}
			if !ok {
				continue
			}
			if _, held := s.find(p); !held && w.final && portable(p) {
				// A closure installed here (a callback another goroutine
				// calls) lets go of our caller's lock at some point.
				w.info.addUnlock(byClass(Hold{Path: p, Class: r.Class, Name: r.Name, Shared: r.Shared}))
			}
			s = s.handedOff(p)
		}
	}
	return s
}

// handedOff is s once the lock at p, if held, is another code's to release.
func (s State) handedOff(p string) State {
	if _, held := s.find(p); held {
		s = s.without(p)
		s.released = remove(s.released, p)
	}
	return s
}

// goHandOff applies the releases of a function started by a go statement
// on a static callee (go s.finish(), where finish unlocks s.mu): the new
// goroutine takes the unlock over, so the lock no longer counts as held
// here, nor as released.
func (w *walker) goHandOff(call *ssa.CallCommon, s State) State {
	if _, isClosure := call.Value.(*ssa.MakeClosure); isClosure {
		return s // handOff's case
	}
	for _, t := range w.targets(call) {
		if !t.exact {
			continue
		}
		sum := w.e.summaryOf(t.fn)
		if sum == nil {
			continue
		}
		for _, r := range sum.handedOver(true) {
			if p, ok := w.calleePath(&t, r.Path); ok {
				s = s.handedOff(p)
			}
		}
	}
	return s
}

// handedOver is what a function takes over of its caller's locks when
// given them: what it releases, and, run as a goroutine of its own, what
// it unlocks at some point.
func (f *funcInfo) handedOver(started bool) []Hold {
	if !started || len(f.unlocks) == 0 {
		return f.releases
	}
	return append(slices.Clone(f.releases), f.unlocks...)
}

// condStep is 0 when the instruction being walked runs on every path to
// the function's return (its block dominates every returning block, or,
// when some branches are dead, every live path to a return passes it), 1
// otherwise: one conditional step for the takes it causes.
func (w *walker) condStep() int {
	if w.blk == nil {
		return 1
	}
	return w.stepAt(w.blk)
}

// stepAt is condStep for an instruction in b.
func (w *walker) stepAt(b *ssa.BasicBlock) int {
	if w.retBlocks == nil {
		w.retBlocks = successReturns(w.fn, returnBlocks(w.fn))
	}
	if len(w.dead) > 0 || len(w.e.onceSkips(w.fn)) > 0 || w.nilGuard != nil {
		if w.avoidable(b) {
			return 1
		}
		return 0
	}
	if !dominatesAll(b, w.retBlocks) {
		return 1
	}
	return 0
}

// returnBlocks lists fn's blocks that end in a return, but the recover
// block; never nil, so that the walk can cache it.
func returnBlocks(fn *ssa.Function) []*ssa.BasicBlock {
	out := []*ssa.BasicBlock{}
	for _, b := range fn.Blocks {
		if b == fn.Recover || len(b.Instrs) == 0 {
			continue
		}
		if _, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			out = append(out, b)
		}
	}
	return out
}

// dominatesAll reports whether b dominates each of bs.
func dominatesAll(b *ssa.BasicBlock, bs []*ssa.BasicBlock) bool {
	for _, x := range bs {
		if !b.Dominates(x) {
			return false
		}
	}
	return true
}

// markDead records whether the branch p -> b is impossible.
func (w *walker) markDead(p, b *ssa.BasicBlock, dead bool) {
	k := [2]int{p.Index, b.Index}
	if dead == w.dead[k] {
		return
	}
	w.branchSteps = nil // steps follow the live branches
	if dead {
		if w.dead == nil {
			w.dead = map[[2]int]bool{}
		}
		w.dead[k] = true
	} else {
		delete(w.dead, k)
	}
}

// avoidable reports whether a return is reachable from the entry over
// live branches without passing through block b.
func (w *walker) avoidable(b *ssa.BasicBlock) bool {
	return w.avoidableAll(func(x *ssa.BasicBlock) bool { return x == b })
}

// avoidableAll reports whether a return is reachable from the entry over
// live branches without passing through any block in.
func (w *walker) avoidableAll(in func(*ssa.BasicBlock) bool) bool {
	if in(w.fn.Blocks[0]) {
		return false
	}
	if w.retBlocks == nil {
		w.retBlocks = successReturns(w.fn, returnBlocks(w.fn))
	}
	skips := w.e.onceSkips(w.fn)
	seen := make([]bool, len(w.fn.Blocks))
	work := []*ssa.BasicBlock{w.fn.Blocks[0]}
	seen[0] = true
	for len(work) > 0 {
		cur := work[len(work)-1]
		work = work[:len(work)-1]
		if slices.Contains(w.retBlocks, cur) {
			return true
		}
		for _, succ := range cur.Succs {
			edge := [2]int{cur.Index, succ.Index}
			if in(succ) || seen[succ.Index] || w.dead[edge] || skips[edge] || w.nilGuard[edge] {
				continue
			}
			seen[succ.Index] = true
			work = append(work, succ)
		}
	}
	return false
}

// calleeObj returns the object of this function holding the lock a callee
// names by path (relative to the callee), when the path's root is an
// argument or binding created here and the lock lies inside it (reached
// through value fields only): see Hold.Obj.
func (w *walker) calleeObj(t *target, path string) ssa.Value {
	if v := calleeArg(t, path); v != nil {
		return w.e.objs.Origin(w.fn, v)
	}
	return nil
}

// calleeArg is the caller's value for the object whose lock a callee's
// path names inside one of its parameters or bindings, nil when the lock
// is not inside that object.
func calleeArg(t *target, path string) ssa.Value {
	root, rest := rootOf(path)
	var v ssa.Value
	if i := paramIndex(root, "p"); i >= 0 && i < len(t.vals) {
		v = t.vals[i]
	} else if i := paramIndex(root, "f"); i >= 0 && i < len(t.bindVals) {
		v = t.bindVals[i]
	}
	if v == nil || !lockop.InsideObject(v.Type(), rest) {
		return nil
	}
	return v
}

// keyedArg reports whether a lock a callee leaves held inside its
// receiver or argument is one key's lock for the caller: the argument is
// an element looked up in a container (nameLock.Lock() for a wrapper
// lockCtr looked up in l.locks[name]), as a direct Lock of it would be.
func (w *walker) keyedArg(t *target, a Hold) bool {
	v := calleeArg(t, a.Path)
	return a.Class != "" && v != nil && lockop.Keyed(v)
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
	return w.e.objs.Via(vals[i])
}

// writesToo reports whether a callee that read-locks tk's lock also
// write-locks it (on some path: influxdb's SeriesIDs, which rebuilds
// a stale cache under Lock after its RUnlock).
func writesToo(sum *funcInfo, tk take) bool {
	return slices.ContainsFunc(sum.takes, func(o take) bool {
		return !o.Shared && !o.fresh && !o.afterRelease && o.Path == tk.Path && o.Class == tk.Class
	})
}
