package locks

import (
	"go/token"
	"go/types"
	"maps"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/roots"
)

// What runs at the same time in a test. go test runs each test function
// on a goroutine of its own (roots.TestFunc); the go statements of test
// code it runs start goroutines beside it. A cycle that needs a test's
// edge deadlocks only if the other order can run at the same time: one
// on the test's goroutine and the other on a goroutine the test starts,
// or each on a goroutine it starts. A test that holds a lock on purpose
// and calls the code that takes the other order on its own goroutine (the
// staged interleavings tests are for) cannot deadlock that way, and is
// not reported; a deadlock a test reproduces between the goroutines it
// starts, in code of its own _test.go files or the package's, is. A
// goroutine production code starts on the way (a constructor's background
// loop, a drain a flush may start) is not followed: whether it runs, and
// takes the other order, during the test depends on the test's options,
// which the analysis does not see.

// testRun is what runs under one test function: on its goroutine (own),
// and on each goroutine the test code it runs starts (one set per start;
// repeats marks a start in a loop, which starts goroutines that run
// beside each other). ownBeside[i] is the part of own that can run while
// goroutine i does: for a goroutine the test function starts itself,
// what it runs after the start (deferred calls included), not the setup
// before it; nil where that is not known (all of own).
type testRun struct {
	own       map[string]bool
	started   []map[string]bool
	repeats   []bool
	ownBeside []map[string]bool
	// afterAt[i]: for a goroutine started on the test's goroutine, per
	// function on the way to the start (the test function, the helpers
	// it calls), the positions of its instructions that can run after
	// the start: its takes there are the ones that can wait for the
	// goroutine's locks.
	afterAt []map[string]map[token.Pos]bool
}

// beside returns the sets of functions that may run at the same time as
// fn under this test, and whether the test runs fn at all.
func (r *testRun) beside(fn string) (sets []map[string]bool, reached bool) {
	reached = r.own[fn]
	for i, s := range r.started {
		mine := r.ownBesideOf(i)
		if mine[fn] {
			sets = append(sets, s)
		}
		if !s[fn] {
			continue
		}
		reached = true
		sets = append(sets, mine)
		for j, other := range r.started {
			if j != i || r.repeats[i] {
				sets = append(sets, other)
			}
		}
	}
	return sets, reached
}

func (r *testRun) ownBesideOf(i int) map[string]bool {
	if r.ownBeside[i] != nil {
		return r.ownBeside[i]
	}
	return r.own
}

// besideInTests returns the sets of functions that may run at the same
// time as fn (by funcName) under the package's tests. Code no test is
// seen to run (reached through calls the analysis does not resolve) is
// taken as a test of its own: the goroutines its own test code starts.
func (e *engine) besideInTests(fn string) []map[string]bool {
	var out []map[string]bool
	reached := false
	for _, r := range e.testRuns() {
		sets, ok := r.beside(fn)
		out = append(out, sets...)
		reached = reached || ok
	}
	if reached {
		return out
	}
	f := e.funcNamed(fn)
	if f == nil {
		return nil
	}
	for f.Parent() != nil {
		f = f.Parent()
	}
	sets, _ := e.testRunOf(f).beside(e.funcName(f))
	return sets
}

// concurrentWithTest reports whether some edge of c can run at the same
// time as the test code witnessing another of its edges (edges of other
// packages are assumed to, and so are the edges another package's code
// runs when it calls into this one: handed edges, whose callers the call
// graph does not show).
func (e *engine) concurrentWithTest(c cycle) bool {
	for _, x := range c.edges {
		if !x.test {
			continue
		}
		beside := e.besideInTests(x.Fn)
		for _, y := range c.edges {
			if y.key() == x.key() {
				continue
			}
			if !local(y) || y.handed != "" || slices.ContainsFunc(beside, func(s map[string]bool) bool { return s[y.Fn] }) {
				return true
			}
		}
	}
	return false
}

// unwrittenInTest reports whether the test cycle c meets at a lock
// read-locked on both sides (readJoints) that nothing able to run at the
// same time as its test edges write-locks: the readers then never wait.
// A write lock of an object not yet shared (a constructor's, before the
// test starts its goroutines) does not count. Only for a lock no other
// package can take (ownUnexported): others' writers are not seen here.
func (e *engine) unwrittenInTest(c cycle) bool {
	for _, j := range e.readJoints(c.edges) {
		if !e.ownUnexported(j.To) {
			continue
		}
		if !slices.ContainsFunc(c.edges, func(x edge) bool { return x.test && e.writesBeside(x.Fn, j.To) }) {
			return true
		}
	}
	return false
}

// writesBeside reports whether something that can run at the same time as
// fn under a test write-locks class (a fresh object's lock aside).
func (e *engine) writesBeside(fn, class string) bool {
	for _, set := range e.besideInTests(fn) {
		for name := range set {
			f := e.funcNamed(name)
			if f == nil || e.infos[f] == nil {
				continue
			}
			if slices.ContainsFunc(e.infos[f].takes, func(t take) bool { return t.Class == class && !t.Shared && !t.fresh }) {
				return true
			}
		}
	}
	return false
}

// startedByTest reports whether fn runs on a goroutine the test code of
// test starts.
func (e *engine) startedByTest(test, fn *ssa.Function) bool {
	name := e.funcName(fn)
	return slices.ContainsFunc(e.testRunOf(test).started, func(s map[string]bool) bool { return s[name] })
}

// testRuns lists what each test function of the package runs, cached.
func (e *engine) testRuns() []*testRun {
	if e.tests == nil {
		e.tests = []*testRun{}
		for _, fn := range e.p.Funcs {
			if roots.TestFunc(e.p.Pass.Fset, fn) {
				e.tests = append(e.tests, e.testRunOf(fn))
			}
		}
	}
	return e.tests
}

// testRunOf computes what runs under fn taken as a test function, cached.
func (e *engine) testRunOf(fn *ssa.Function) *testRun {
	if r, ok := e.testStarts[fn]; ok {
		return r
	}
	r := &testRun{}
	e.testStarts[fn] = r
	startSeen := map[ssa.Instruction]bool{}
	// goroutine collects what runs on one goroutine from its entries
	// (what they call, closures run in place included), then adds the
	// goroutines its test code starts, each a set of its own.
	var goroutine func(entries []*ssa.Function) map[string]bool
	goroutine = func(entries []*ssa.Function) map[string]bool {
		set := map[string]bool{}
		seen := map[*ssa.Function]bool{}
		var nested []start
		var visit func(f *ssa.Function)
		visit = func(f *ssa.Function) {
			if seen[f] {
				return
			}
			seen[f] = true
			st := e.stepOf(f)
			set[st.name] = true
			if st.test || f == fn {
				nested = append(nested, st.starts...)
			}
			for _, c := range st.callees {
				visit(c)
			}
		}
		for _, f := range entries {
			visit(f)
		}
		for _, st := range nested {
			if startSeen[st.instr] {
				continue
			}
			startSeen[st.instr] = true
			s := goroutine(st.targets)
			mine, at := e.ownAfter(fn, st.instr)
			r.started = append(r.started, s)
			r.repeats = append(r.repeats, objects.OnCycle(st.instr.Block()))
			r.ownBeside = append(r.ownBeside, mine)
			r.afterAt = append(r.afterAt, at)
		}
		return set
	}
	r.own = goroutine([]*ssa.Function{fn})
	return r
}

// ownAfter returns what the test function fn runs on its goroutine after
// the goroutine start at, made in fn or in a function fn calls in place
// (a helper that starts the goroutine): what follows at in its function,
// and what follows each call on the way from fn; and, for each function
// on that way, the positions of its instructions among them. nil, nil
// when at is not on fn's goroutine (a goroutine a started one starts).
func (e *engine) ownAfter(fn *ssa.Function, at ssa.Instruction) (map[string]bool, map[string]map[token.Pos]bool) {
	chain, ok := e.callsTo(fn, at.Parent())
	if !ok {
		return nil, nil
	}
	mine := map[string]bool{}
	pos := map[string]map[token.Pos]bool{}
	for _, after := range append([]ssa.Instruction{at}, chain...) {
		more, morePos := e.runsAfter(after.Parent(), after)
		maps.Copy(mine, more)
		name := e.funcName(after.Parent())
		if pos[name] == nil {
			pos[name] = morePos
		} else {
			maps.Copy(pos[name], morePos)
		}
	}
	return mine, pos
}

// callsTo returns the calls (first found, breadth first) by which fn
// reaches f in place, ok false when it does not.
func (e *engine) callsTo(fn, f *ssa.Function) ([]ssa.Instruction, bool) {
	type step struct {
		from *ssa.Function
		call ssa.Instruction
	}
	prev := map[*ssa.Function]step{fn: {}}
	queue := []*ssa.Function{fn}
	for len(queue) > 0 && f != fn {
		g := queue[0]
		queue = queue[1:]
		inPlace := e.stepOf(g).callees
		for _, b := range g.Blocks {
			for _, instr := range b.Instrs {
				for _, c := range e.appendCallees(nil, g, instr, false) {
					if _, seen := prev[c]; !seen && slices.Contains(inPlace, c) {
						prev[c] = step{g, instr}
						queue = append(queue, c)
					}
				}
			}
		}
		if _, found := prev[f]; found {
			break
		}
	}
	if _, found := prev[f]; !found {
		return nil, false
	}
	var chain []ssa.Instruction
	for g := f; g != fn; g = prev[g].from {
		chain = append(chain, prev[g].call)
	}
	return chain, true
}

// runsAfter returns what fn runs on its own goroutine after the
// goroutine start at: fn itself, and the functions the calls that can
// follow the start (and fn's deferred calls) run in place; and the
// positions of those instructions of fn.
func (e *engine) runsAfter(fn *ssa.Function, at ssa.Instruction) (map[string]bool, map[token.Pos]bool) {
	out := map[string]bool{e.funcName(fn): true}
	pos := map[token.Pos]bool{}
	var reach func(f *ssa.Function)
	reach = func(f *ssa.Function) {
		st := e.stepOf(f)
		if out[st.name] {
			return
		}
		out[st.name] = true
		for _, c := range st.callees {
			reach(c)
		}
	}
	inPlace := e.stepOf(fn).callees
	visit := func(instr ssa.Instruction) {
		pos[instr.Pos()] = true
		for _, c := range e.appendCallees(nil, fn, instr, false) {
			if slices.Contains(inPlace, c) {
				reach(c)
			}
		}
	}
	b := at.Block()
	after := false
	for _, instr := range b.Instrs {
		if after {
			visit(instr)
		}
		after = after || instr == at
	}
	later := objects.BlocksFrom(b.Succs, nil)
	for _, blk := range fn.Blocks {
		if later[blk] {
			for _, instr := range blk.Instrs {
				visit(instr)
			}
			continue
		}
		for _, instr := range blk.Instrs {
			if _, ok := instr.(*ssa.Defer); ok {
				visit(instr) // runs at the return, after the start
			}
		}
	}
	return out, pos
}

// takesAfterStart reports whether the test function test, once it has
// started the goroutine fn runs on, takes a lock m blocks on: what it
// took before the start was let go before fn could hold anything.
func (e *engine) takesAfterStart(test, fn *ssa.Function, m takeMode) bool {
	run := e.testRunOf(test)
	name := e.funcName(fn)
	for i, s := range run.started {
		if !s[name] {
			continue
		}
		for f := range run.ownBesideOf(i) {
			g := e.funcNamed(f)
			info := e.infos[g]
			if g == nil || info == nil {
				continue
			}
			takes := info.takes
			if after := run.afterAt[i][f]; after != nil {
				takes = slices.DeleteFunc(slices.Clone(takes), func(t take) bool { return !after[t.Pos] })
			}
			if m.blocks(takes) {
				return true
			}
		}
	}
	return false
}

// testStep is what testRunOf needs of one function, computed once: its
// name, whether it is test code, the goroutines it starts and what it
// runs in place.
type testStep struct {
	name    string
	test    bool
	starts  []start
	callees []*ssa.Function
}

func (e *engine) stepOf(f *ssa.Function) *testStep {
	if st, ok := e.testSteps[f]; ok {
		return st
	}
	starts := e.startsIn(f)
	st := &testStep{name: e.funcName(f), test: e.inTest(f.Pos()), starts: starts, callees: e.inPlaceCallees(f, starts)}
	e.testSteps[f] = st
	return st
}

// start is a goroutine start in a function: a go statement, or a call
// of an asynchronous API (errgroup.Go, WaitGroup.Go, time.AfterFunc,
// //confined:spawns functions: roots.Contexts.AsyncArgs), with the
// functions it may start.
type start struct {
	instr   ssa.CallInstruction
	targets []*ssa.Function
}

// startsIn lists the goroutines f starts.
func (e *engine) startsIn(f *ssa.Function) []start {
	var out []start
	for _, b := range f.Blocks {
		for _, instr := range b.Instrs {
			switch in := instr.(type) {
			case *ssa.Go:
				out = append(out, start{in, e.goTargets(f, in)})
			case ssa.CallInstruction:
				var targets []*ssa.Function
				for _, v := range e.ctx.AsyncArgs(in) {
					targets = append(targets, e.funcsOf(f, v)...)
				}
				if len(targets) > 0 {
					out = append(out, start{in, targets})
				}
			}
		}
	}
	return out
}

// inPlaceCallees is callees without goroutine starts: neither the
// functions go statements start nor the closures made only to be
// started (by a go statement or an asynchronous API).
func (e *engine) inPlaceCallees(fn *ssa.Function, starts []start) []*ssa.Function {
	startedAt := map[ssa.Instruction][]*ssa.Function{}
	for _, st := range starts {
		startedAt[st.instr] = st.targets
	}
	started := map[*ssa.Function]bool{}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			mc, ok := instr.(*ssa.MakeClosure)
			if !ok {
				continue
			}
			target := mc.Fn.(*ssa.Function)
			if m := e.boundMethod(target); m != nil {
				target = m
			}
			refs := *mc.Referrers()
			if len(refs) > 0 && !slices.ContainsFunc(refs, func(in ssa.Instruction) bool {
				return !slices.Contains(startedAt[in], e.canonical(target))
			}) {
				started[e.canonical(target)] = true
			}
		}
	}
	out := e.callees(fn, false)
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if call, ok := instr.(*ssa.Call); ok {
				out = append(out, e.handedMethods(fn, call.Common())...)
			}
		}
	}
	return slices.DeleteFunc(out, func(f *ssa.Function) bool { return started[f] })
}

// handedMethods lists the methods of the package's types that a call of
// another package's function may run in place: those of a value passed
// to it as an interface with methods (heap.Push(h, x) runs h's Less and
// Swap, sort.Sort its).
func (e *engine) handedMethods(fn *ssa.Function, c *ssa.CallCommon) []*ssa.Function {
	callee := c.StaticCallee()
	if callee == nil || callee.Pkg == fn.Pkg || callee.Pkg == nil {
		return nil
	}
	var out []*ssa.Function
	for _, a := range c.Args {
		mi, ok := a.(*ssa.MakeInterface)
		if !ok {
			continue
		}
		iface, ok := mi.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		mset := fn.Prog.MethodSets.MethodSet(mi.X.Type())
		for i := range iface.NumMethods() {
			m := iface.Method(i)
			sel := mset.Lookup(m.Pkg(), m.Name())
			if sel == nil {
				continue
			}
			obj, _ := sel.Obj().(*types.Func)
			if obj == nil {
				continue
			}
			if f := fn.Prog.FuncValue(obj); f != nil && e.p.FuncSet[e.canonical(f)] {
				out = append(out, e.canonical(f))
			}
		}
	}
	return out
}

// goTargets lists the package functions a go statement may start.
func (e *engine) goTargets(from *ssa.Function, g *ssa.Go) []*ssa.Function {
	c := g.Common()
	if c.IsInvoke() {
		return e.implementations(c)
	}
	if callee := c.StaticCallee(); callee != nil {
		if e.p.FuncSet[e.canonical(callee)] {
			return []*ssa.Function{e.canonical(callee)}
		}
		return nil
	}
	return e.funcsOf(from, c.Value)
}

// funcNamed finds a package function by its funcName.
func (e *engine) funcNamed(name string) *ssa.Function {
	if e.byName == nil {
		e.byName = map[string]*ssa.Function{}
		for _, f := range e.p.Funcs {
			if n := e.funcName(f); e.byName[n] == nil {
				e.byName[n] = f
			}
		}
	}
	return e.byName[name]
}

// noWriterDuringTest reports whether a recursive read lock at pos, in test
// code, can never wait behind a writer: nothing that may run at the same
// time under a test write-locks class (the read lock's own goroutine
// cannot write-lock it while it holds the read lock without deadlocking
// by itself, a finding of its own).
func (e *engine) noWriterDuringTest(fn *ssa.Function, class string, pos token.Pos) bool {
	if class == "" || !e.inTest(pos) {
		return false
	}
	return !e.writesBeside(e.funcName(fn), class)
}
