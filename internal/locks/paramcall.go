package locks

import (
	"go/token"
	"go/types"
	"slices"
	"strconv"

	"golang.org/x/tools/go/ssa"
)

// A function that calls a func value it was given (a parameter, or a
// variable its creator captured) cannot know what the call takes; each of
// its callers can. The summary records the call with the locks held at it
// (paramCall); a caller that passes a known function adds that function's
// takes as taken under the callee's holds and its own, for edges and,
// when everything is certain, a double lock (Drain(h) calling h under
// q.mu, passed a closure that locks q.mu). A caller that passes its own
// parameter on records the call in its own summary.

// paramCall is one synchronous call of a func value the function was
// given.
type paramCall struct {
	Path string // the value called: "p1" or "f0", relative to the function
	// Held is the locks definitely held at the call, paths relative to the
	// function ("" when not portable: edges only).
	Held   []Hold
	Fn     string    // the function the call is in, for witnesses
	Pos    token.Pos // the call
	cond   int       // conditional steps down to the call, as take.cond
	branch int       // those of them that are branches, as take.branch
	// Via is the calls from the function down to Fn, nil when Fn is the
	// function itself.
	Via *callChain
	// Format: the call formats the elements of Path, the function's
	// variadic ...any parameter, rather than calling it: fmt calls their
	// String or Error methods there, under Held (formatfwd.go).
	Format bool
	// Elems: the call is of an element of Path, a slice of func values
	// (paramelems.go).
	Elems bool
	// fail names the call whose failure is the one branch down to the
	// call ("findAuthority"): a condition that holds sometimes whatever
	// the caller knows (failpath.go).
	fail string
	// holder: where Held is held, when that is a caller that passed its
	// own func value on, not Fn (AddCloser holding its lock across the
	// c.Close() that calls it), for the edges' witness.
	holder *paramHolder
	// args is the call's argument count and nonNil the arguments known
	// not nil there, one bit each (an error the call's branch found not
	// nil): what decides a passed function's `if err == nil { return }`
	// (paramargs.go).
	args   int
	nonNil uint64
	// library: the call is a library function's that runs its argument
	// before returning (runsArgument).
	library bool
}

// paramHolder is the function holding a param call's locks, the call it
// makes there and the calls from it down to the func value's call.
type paramHolder struct {
	fn  string
	pos token.Pos
	via *callChain
}

// maxParamCalls bounds a summary's param calls.
const maxParamCalls = 16

func (f *funcInfo) addParamCall(pc paramCall) {
	for _, o := range f.paramCalls {
		if o.Path == pc.Path && o.Pos == pc.Pos && o.Elems == pc.Elems && len(o.Held) == len(pc.Held) {
			return
		}
	}
	if len(f.paramCalls) < maxParamCalls {
		f.paramCalls = append(f.paramCalls, pc)
	}
}

// calledParam returns the path of v when it is one of the walked
// function's parameters or free variables itself ("p1", "f0"), else "".
func (w *walker) calledParam(from *ssa.Function, v ssa.Value) string {
	if from != w.fn {
		return ""
	}
	p := pathOf(w.fn, v)
	root, rest := rootOf(p)
	if rest != "" || paramIndex(root, "p") < 0 && paramIndex(root, "f") < 0 {
		return ""
	}
	return p
}

// recordParamCall records a call of the func value v, when it is a
// parameter or free variable, with the locks definitely held.
func (w *walker) recordParamCall(call *ssa.CallCommon, pos token.Pos, s State) {
	if !w.final {
		return
	}
	v := call.Value
	p, elems := w.calledParam(w.fn, v), false
	if p == "" {
		p, elems = w.elemOfParam(v), true
	}
	if p == "" {
		return
	}
	pc := paramCall{Path: p, Held: definite(s.holds), Fn: w.e.funcName(w.fn), Pos: pos, cond: w.condStep(), branch: w.branchStep(), Elems: elems, args: len(call.Args), nonNil: w.nonNilArgs(call.Args, s)}
	if pc.branch == 1 {
		pc.fail, _ = w.failureAt(w.blk)
	}
	w.info.addParamCall(pc)
}

// definite returns the holds that are held on every path, for a summary.
func definite(hs []Hold) []Hold {
	var out []Hold
	for _, h := range hs {
		if h.Maybe || h.Lent {
			continue
		}
		h.Obj = nil
		if !portable(h.Path) {
			h.Path = ""
		}
		out = append(out, h)
	}
	return out
}

// callParams applies the param calls of t's callee (its summary's, and a
// library's that runs its argument now, as sync.Once.Do) at a call at pos
// under s.
func (w *walker) callParams(t *target, sum *funcInfo, pos token.Pos, s State) {
	// Only a callee known for sure: the locks a candidate of an interface
	// call would hold are a guess, and the function passed another.
	if !t.exact {
		return
	}
	var pcs []paramCall
	if sum != nil {
		pcs = sum.paramCalls
	}
	if pc, ok := w.e.runsArgument(t.fn); ok {
		pcs = append(pcs[:len(pcs):len(pcs)], pc)
	}
	if len(pcs) == 0 {
		return
	}
	step, stepBranch := w.condStep()+t.cond, w.branchStep()+t.cond
	name := t.name(w.e)
	for _, pc := range pcs {
		if pc.cond+step > maxCond || pc.Via.len()+1 > maxVia {
			continue
		}
		v, from := t.valueOf(w.fn, pc.Path)
		if v == nil {
			continue
		}
		held := w.heldInCaller(t, pc.Held, nil)
		via := pc.Via.push(name)
		if own := w.calledParam(from, v); own != "" {
			// Our own func value, passed on: our callers know it.
			ours := definite(s.holds)
			passed := paramCall{Path: own, Held: append(ours, held...), Fn: pc.Fn, Pos: pc.Pos, cond: pc.cond + step, branch: pc.branch + stepBranch, Via: via, Format: pc.Format, Elems: pc.Elems, holder: pc.holder, args: pc.args, nonNil: pc.nonNil}
			if stepBranch == 0 {
				passed.fail = pc.fail
			}
			if len(held) == 0 && len(ours) > 0 && pc.holder == nil {
				passed.holder = &paramHolder{fn: w.e.funcName(w.fn), pos: pos, via: via}
			}
			w.info.addParamCall(passed)
			continue
		}
		if pc.Format {
			w.formatParamTakes(t, v, pc, held, via, pc.cond+step, pc.branch+stepBranch, pos, s)
			continue
		}
		passed := []ssa.Value{v}
		if pc.Elems {
			passed = sliceElems(v) // the functions the slice argument holds
		}
		for _, fv := range passed {
			for _, ft := range w.valueTargets(nil, from, fv, nil) {
				if fsum := w.passedSummary(&ft, from, s); fsum != nil {
					w.paramTakes(&ft, fsum, pc, held, via, pc.cond+step, pc.branch+stepBranch, pos, s)
					// Its channel operations are the call's too (a
					// sync.Once's function closing a listener).
					for _, op := range fsum.chans {
						op.Before = union(op.Before, s.took)
						w.info.addChan(op)
					}
					if pc.library {
						w.passedBlocks(&ft, fsum, via, pc.cond+step, pos, s)
					}
					if !pc.Elems {
						w.passOnCaptured(&ft, fsum, pc, held, via, step, stepBranch, s)
					}
				}
			}
		}
	}
}

// passedBlocks adds, as blocking at the call at pos, what ft, a
// function passed to a library function that runs it now, blocks on, and
// reports the locks held in s across it: a sync.Once's function sending
// its done signal (bubbletea's renderer stop). via is the chain down to
// the call of ft. A function passed to the package's own callee is not
// followed so: tried, it reported controller-runtime's fixed priority
// queue, whose function passed to the tree's Ascend selects on the send
// and on the done channel ShutDown closes without the lock.
func (w *walker) passedBlocks(ft *target, fsum *funcInfo, via *callChain, cond int, pos token.Pos, s State) {
	fname := ft.name(w.e)
	w.addBlocks(ft, fsum.blocks, cond, pos, s, func(b blockOp) *callChain {
		return chainOf(append(append(via.names(), fname), b.Via.names()...))
	})
}

// passedSummary is the summary of ft, a function passed for a param call:
// for a literal made here, specialized by what it captured, as if
// called in place (initPlain(true) handing sync.Once.Do `func() { if lock
// { p.mu.Lock() } }`).
func (w *walker) passedSummary(ft *target, from *ssa.Function, s State) *funcInfo {
	if from != w.fn {
		return w.e.summaryOf(ft.fn)
	}
	return w.summaryFor(ft, s)
}

// passOnCaptured records, as the walked function's own param calls, the
// calls the closure ft (passed for pc) makes of a func value it captured
// from the walked function's parameters: updateInstance(update) handing
// the store's CAS a closure that calls update, under updateInstance's
// lock. Its callers know update (mimir's heartbeat delegate). The held
// locks are the walked function's, the callee's at its call of the
// closure, and the closure's own at its call of the value.
func (w *walker) passOnCaptured(ft *target, fsum *funcInfo, pc paramCall, held []Hold, via *callChain, step, stepBranch int, s State) {
	if ft.owner != nil {
		return
	}
	for _, inner := range fsum.paramCalls {
		root, rest := rootOf(inner.Path)
		k := paramIndex(root, "f")
		if rest != "" || k < 0 || k >= len(ft.bindVals) || ft.bindVals[k] == nil {
			continue
		}
		own := w.calledParam(w.fn, ft.bindVals[k])
		if own == "" || pc.cond+inner.cond+step > maxCond {
			continue
		}
		all := w.heldInCaller(ft, inner.Held, append(definite(s.holds), held...))
		chain := chainOf(append(append(via.names(), ft.name(w.e)), inner.Via.names()...))
		w.info.addParamCall(paramCall{Path: own, Held: all, Fn: inner.Fn, Pos: inner.Pos, cond: pc.cond + inner.cond + step, branch: pc.branch + inner.branch + stepBranch, Via: chain, Format: inner.Format, args: inner.args, nonNil: inner.nonNil})
	}
}

// heldInCaller appends to out the holds hs of t's callee with their
// paths in the walked function's terms ("" when it cannot name them).
func (w *walker) heldInCaller(t *target, hs []Hold, out []Hold) []Hold {
	for _, h := range hs {
		if p, ok := w.calleePath(t, h.Path); ok && h.Path != "" {
			h.Path = p
		} else {
			h.Path = ""
		}
		out = append(out, h)
	}
	return out
}

// paramTakes adds the takes of ft, the function passed for the param
// call pc, as taken at pos (through via) with held held in the callee and
// s here: edges from both, a double lock when all of it is certain.
func (w *walker) paramTakes(ft *target, fsum *funcInfo, pc paramCall, held []Hold, via *callChain, cond, branch int, pos token.Pos, s State) {
	fname := ft.name(w.e)
	literal := ft.fn.Parent() != nil && ft.fn.Parent() == w.fn
	for _, tk := range fsum.takes {
		// The passed function's one branch to the take tests a parameter
		// the call gives a value known not nil: no condition at all.
		decided := 0
		if argDecides(ft, tk, pc) {
			decided = 1
		}
		tk.cond, tk.branch = tk.cond-decided, tk.branch-decided
		c := tk.cond + cond
		// A literal's own branches are this function's code, which
		// records its edges on any branch: they do not count against
		// the bound.
		bounded := c
		if literal {
			bounded -= tk.own
		}
		if tk.afterRelease || bounded > maxCond || via.len()+1+tk.Via.len() > maxVia {
			continue
		}
		chain := chainOf(append(append(via.names(), fname), tk.Via.names()...))
		h := Hold{Class: tk.Class, Name: tk.Name, Shared: tk.Shared, Pos: pos, Sub: tk.Sub, leaf: tk.leaf}
		if p, ok := w.calleePath(ft, tk.Path); ok && ft.exact && tk.Path != "" {
			h.Path = p
		}
		// steps: the passed function's own conditional steps to the take.
		// A literal made here is this function's code: its own branches
		// are ours, which a double lock does not wait on (as for a Lock
		// written here); what it calls must still take the lock for sure.
		// The double lock counts branches only (iterations.go).
		must := ft.exact && c == 0
		// Our own branch to the call is no condition of the double lock, as
		// for a callee that takes it (callTakes): the call happens, or not.
		// Nor is a failure that is the callee's one branch to it.
		failStep := 0
		if pc.fail != "" {
			failStep = 1
		}
		steps, relock := tk.branch, ft.exact && tk.branch+branch-failStep-w.branchStep() == 0
		if literal {
			must = ft.exact && tk.cond-tk.own+pc.cond == 0
			steps -= tk.ownBranch
			// A literal checked under our state reports our locks
			// inside itself (a range-over-func body).
			relock = ft.exact && steps+pc.branch-failStep == 0 && !w.e.checkedUnderCaller(ft.fn)
		}
		relockedOurs := false
		// A take on some paths of the passed function, each step down
		// to it static and the function that takes it locking on every
		// path, is a double lock against a lock the callee holds at the
		// call, as in callTakes (relockSomePaths).
		somePaths := steps != 0 && tk.leafSure && !tk.loose && bounded <= maxCond
		// Taken only where a parameter is nil that the call passes a
		// value known not to be: never through this call.
		if nilArgKnown(ft, tk, pc) {
			continue // taken only where a parameter is nil that the call passes not nil
		}
		where := " (at " + tk.At + ")"
		if somePaths {
			// Against ours only when the callee runs the function on
			// every path (sync.Once.Do): then the branches down to the
			// take are the callers' choices, as for a static call.
			// A library callee's own conditions are none of ours.
			decides := chain
			if pc.library {
				decides = chainOf(append([]string{fname}, tk.Via.names()...))
			}
			runsSure := branch-failStep-w.branchStep() == 0
			if literal {
				runsSure = pc.branch-failStep == 0 && !w.e.checkedUnderCaller(ft.fn)
			}
			relock = ft.exact && runsSure && !w.writesShared(token.NoPos, pos, decides)
			where = " (at " + tk.At + ", on the paths that call " + chain.last() + ")"
		} else if relock && pc.fail != "" {
			where = " (at " + tk.At + ", on the path where " + pc.fail + " fails)"
		}
		// A lock the passed function reaches through what its maker gave
		// it, which the callee cannot name, is still the held one when the
		// program makes one object of its type (paramRelock).
		if w.report && (h.Path != "" || h.Class != "") && ft.exact && (steps == 0 || somePaths) {
			// Against a lock the callee holds at its call of the function,
			// the callee's branch to that call is its own code too (as a
			// call written on that branch); against ours, it is a
			// condition we cannot see.
			relockedOurs = w.paramRelock(h, held, s, relock, pos, " by "+chain.text()+where)
		}
		if w.report {
			w.edgesTo(s, h, pos, chain, must, false)
			// Taken again while we hold it, not in an order: no edge from
			// the callee's locks to it (an inversion against our own
			// order of them would be the same double lock again).
			if !relockedOurs {
				site := edgeSite{fn: pc.Fn, pos: pc.Pos}
				var down []string
				if pc.holder != nil {
					site.fn, site.pos, down = pc.holder.fn, pc.holder.pos, pc.holder.via.names()
				}
				site.via = chainOf(append(append(down, fname), tk.Via.names()...)).text() + ", passed at " + w.e.at(pos)
				site.test = w.e.inTest(pos) || w.e.inTest(site.pos)
				w.edgesFrom(held, h, site, must)
			}
		}
		// A passed function that takes the lock on every path keeps its
		// take sure for the callers' choice to call (relockSomePaths);
		// its own branches are on what it is given (take.dynBranch).
		nt := take{Path: h.Path, Class: tk.Class, Name: tk.Name, Shared: tk.Shared, Pos: pos, At: tk.At, leaf: tk.leaf, Via: chain, afterRelease: s.outer, cond: c, own: w.condStep(), branch: tk.branch + branch, ownBranch: w.branchStep(), Sub: h.Sub,
			leafSure: (tk.leafSure || decided == 1 && tk.cond == 0) && ft.exact && !tk.loose, dynBranch: tk.dynBranch || tk.branch > 0}
		if decided == 1 && pc.fail != "" && tk.branch == 0 && branch == pc.branch && pc.branch == 1 {
			// Taken wherever the callee's one failure branch calls it.
			nt.failed = pc.fail
		}
		w.info.addTake(nt)
	}
}

// paramRelock reports h, taken by a function passed to a call, when the
// callee holds the same lock at the call of it, or, when must (every step
// a loop's iteration or certain, or the callers' choices below a callee
// that runs the function for sure), the caller does; it says whether it
// reported the caller's lock taken again.
func (w *walker) paramRelock(h Hold, held []Hold, s State, must bool, pos token.Pos, via string) bool {
	if h.Path == "" {
		// Reached through what the function's maker gave it: the held
		// lock only when the program makes one object of its type.
		inCallee := s
		inCallee.holds = slices.DeleteFunc(slices.Clone(held), func(o Hold) bool { return o.Path == "" })
		if o, why := w.singletonHeld(inCallee, h); why != "" {
			w.reportRelock(o, h, pos, via+why)
			return false
		}
		// Or ours, when the take is certain (as in callTakes).
		if o, why := w.singletonHeld(s, h); must && why != "" && !o.Opaque {
			w.reportRelock(o, h, pos, via+why)
			return true
		}
		return false
	}
	for _, o := range held {
		if o.Path == h.Path {
			w.reportRelock(o, h, pos, via)
			return false
		}
	}
	// The callee's lock under another name: the one object of its
	// type, a field the package copies (cockroach's verifyStore, given
	// the store twice, as itself and as the reader its callback asks).
	inCallee := s // what the walk knows here (facts), with the callee's holds
	inCallee.holds = held
	if o, why := w.copiedAlias(inCallee, h); why != "" {
		w.reportRelock(o, h, pos, via+why)
		return false
	}
	if !must {
		return false
	}
	if old, ok := s.find(h.Path); ok && !old.Maybe && !old.Opaque {
		w.reportRelock(old, h, pos, via)
		return true
	}
	return false
}

// valueOf returns the caller's value for a callee's root path ("p1",
// "f0") and the function it lives in.
func (t *target) valueOf(caller *ssa.Function, root string) (ssa.Value, *ssa.Function) {
	var v ssa.Value
	if i := paramIndex(root, "p"); i >= 0 && i < len(t.vals) {
		v = t.vals[i]
	} else if i := paramIndex(root, "f"); i >= 0 && i < len(t.bindVals) {
		v = t.bindVals[i]
	} else if i >= 0 && t.bindVals == nil {
		return capturedAtMaking(t.fn, i)
	}
	if v == nil {
		return nil, nil
	}
	if t.owner != nil && t.owner != caller && v.Parent() == t.owner {
		return v, t.owner
	}
	return v, caller
}

// capturedAtMaking returns the value the closure fn's free variable i is
// bound to and the function that makes fn, when fn is made at one place:
// a closure called through a field or container it was stored in, not
// by its maker, calls what its maker captured (oxia's gauge callback
// wrapping the func NewGauge was given). That value is the maker's, so
// the functions it may hold are followed from there (objects.FuncsOf).
func capturedAtMaking(fn *ssa.Function, i int) (ssa.Value, *ssa.Function) {
	if fn.Parent() == nil || fn.Referrers() == nil {
		return nil, nil
	}
	var made *ssa.MakeClosure
	for _, r := range *fn.Referrers() {
		if mc, ok := r.(*ssa.MakeClosure); ok {
			if made != nil {
				return nil, nil
			}
			made = mc
		}
	}
	if made == nil || i >= len(made.Bindings) {
		return nil, nil
	}
	return cellValue(made.Bindings[i]), made.Parent()
}

// runsArgument returns the param call of a library function that calls
// its func argument before returning: sync.Once.Do, and the standard
// library's iterations and sorts (sync.Map's Range, sort.Slice,
// slices.SortFunc, filepath.Walk, ...). Once.Do runs it the first time
// only, yet counts as a certain step: a Do under a lock its function
// takes deadlocks the first time, and code that relies on the once having
// run before, elsewhere, has no reason to call Do there. An iteration
// runs it for each element, as a loop runs its body: a Range under a lock
// its function takes deadlocks on the first entry.
func (e *engine) runsArgument(fn *ssa.Function) (paramCall, bool) {
	if fn == nil || fn.Pkg == nil {
		return paramCall{}, false
	}
	if o := fn.Origin(); o != nil {
		fn = o
	}
	obj, ok := fn.Object().(*types.Func)
	if !ok {
		return paramCall{}, false
	}
	i, ok := runsArgumentAt[obj.FullName()]
	if !ok {
		return paramCall{}, false
	}
	return paramCall{Path: "p" + strconv.Itoa(i), Fn: e.funcName(fn), Pos: token.NoPos, library: true}, true
}

// runsArgumentAt gives, for each library function that calls a func
// argument before it returns, that argument's parameter index (a
// method's receiver is 0).
var runsArgumentAt = map[string]int{
	"(*sync.Once).Do":       1,
	"(*sync.Map).Range":     1,
	"sort.Slice":            1,
	"sort.SliceStable":      1,
	"sort.Search":           1,
	"slices.SortFunc":       1,
	"slices.SortStableFunc": 1,
	"slices.IndexFunc":      1,
	"slices.ContainsFunc":   1,
	"slices.DeleteFunc":     1,
	"maps.DeleteFunc":       1,
	"strings.FieldsFunc":    1,
	"path/filepath.Walk":    1,
	"path/filepath.WalkDir": 1,
	"io/fs.WalkDir":         2,
}

// checkedUnderCaller reports whether the closure fn is walked with its
// creator's locks held for sure (run in place, a range-over-func body),
// so that it reports taking them again itself; a closure passed to a
// call is walked with them lent (maybe held) and does not.
func (e *engine) checkedUnderCaller(fn *ssa.Function) bool {
	ce := e.closureEntry[fn]
	return ce != nil && slices.ContainsFunc(ce.holds, func(h Hold) bool { return !h.Lent && !h.Maybe })
}
