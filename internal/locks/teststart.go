package locks

import (
	"go/token"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// A cycle that needs a test's edge deadlocks only if the other order runs
// at the same time as the test's hold: on a goroutine the test starts. A
// test that holds a lock on purpose and calls the code that takes the
// other order on its own goroutine (the staged interleavings tests are
// for) cannot deadlock that way, and is not reported. Goroutines are
// those started by go statements in the test function, its closures and
// the _test.go helpers it calls; a goroutine production code starts (a
// constructor's background loop, a drain a flush may start) is not
// followed: whether it runs, and takes the other order, during the test
// depends on the test's options, which the analysis does not see.

// concurrentWithTest reports whether some edge of c runs on a goroutine
// started by the test code witnessing another of its edges (edges of
// other packages are assumed to).
func (e *engine) concurrentWithTest(c cycle) bool {
	for _, x := range c.edges {
		if !x.test {
			continue
		}
		started := e.startedByTest(x.Fn)
		for _, y := range c.edges {
			if y.key() == x.key() {
				continue
			}
			if !local(y) || started[y.Fn] {
				return true
			}
		}
	}
	return false
}

// startedByTest returns the names of the functions reachable from the
// goroutines the named test function starts (see above), cached.
func (e *engine) startedByTest(name string) map[string]bool {
	if out, ok := e.testStarts[name]; ok {
		return out
	}
	out := map[string]bool{}
	e.testStarts[name] = out
	fn := e.funcNamed(name)
	if fn == nil {
		return out
	}
	// The test's own code: the function, its closures and test helpers.
	var roots []*ssa.Function
	seen := map[*ssa.Function]bool{}
	var visit func(f *ssa.Function)
	visit = func(f *ssa.Function) {
		if seen[f] || !e.inTest(f.Pos()) && f != fn {
			return
		}
		seen[f] = true
		for _, b := range f.Blocks {
			for _, instr := range b.Instrs {
				if g, ok := instr.(*ssa.Go); ok {
					roots = append(roots, e.goTargets(f, g)...)
				}
			}
		}
		for _, c := range e.calleesOf(f) {
			visit(c)
		}
	}
	visit(fn)
	// Everything those goroutines may run.
	var reach func(f *ssa.Function)
	reach = func(f *ssa.Function) {
		name := e.funcName(f)
		if out[name] {
			return
		}
		out[name] = true
		for _, c := range e.callees(f, e.inTest(f.Pos())) {
			reach(c)
		}
	}
	for _, r := range roots {
		reach(r)
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
// code, can never wait behind a writer: no goroutine the test starts
// write-locks class (a test's own goroutine cannot write-lock it while it
// holds the read lock without deadlocking by itself, a finding of its own).
func (e *engine) noWriterDuringTest(fn *ssa.Function, class string, pos token.Pos) bool {
	if class == "" || !e.inTest(pos) {
		return false
	}
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	for name := range e.startedByTest(e.funcName(fn)) {
		f := e.funcNamed(name)
		if f == nil {
			continue
		}
		if info := e.infos[f]; info != nil && slices.ContainsFunc(info.takes, func(t take) bool { return t.Class == class && !t.Shared }) {
			return false
		}
	}
	return true
}
