package locks

import (
	"slices"

	"golang.org/x/tools/go/ssa"
)

// A gate lock: when every edge of a cycle is taken while one more lock G
// is held exclusively (G.Lock(); A.Lock(); B.Lock() in one function,
// G.Lock(); B.Lock(); A.Lock() in another), the two orders never run at
// the same time and the cycle cannot deadlock. Held for reading at some
// edges is enough when another edge holds it for writing: a rename under
// renameMu.Lock() never runs beside an unlink under renameMu.RLock(), so
// no two witnesses that would have to wait on each other run at once. A
// lock counts as held at an edge when the witnessing function holds it
// there, or when it is held on entry: the function releases it without
// taking it on every path (an Unlock helper runs under its caller's lock;
// a transaction's Abort that unlocks the writer lock or the read lock by
// the transaction's kind proves neither), or it is unexported and every
// call of it in the package holds it. Gates are compared by class: two
// objects of one class each gating their own pair are taken as one gate.

// gateWitness is a function that witnessed an edge, or called a
// function, holding the exclusive lock classes held.
type gateWitness struct {
	fn     *ssa.Function
	held   []string
	shared []string // classes held surely, for reading only
}

// exclusiveClasses lists the classes held for sure and exclusively in
// holds, but for the ones named in except.
func exclusiveClasses(holds []Hold, except ...string) []string {
	return classesHeld(holds, false, except)
}

// classesHeld lists the classes held for sure in holds, exclusively or
// (shared) for reading only, but for the ones named in except.
func classesHeld(holds []Hold, shared bool, except []string) []string {
	var out []string
	for _, h := range holds {
		if h.Maybe || h.Shared != shared || h.Class == "" || slices.Contains(except, h.Class) {
			continue
		}
		if !slices.Contains(out, h.Class) {
			out = append(out, h.Class)
		}
	}
	return out
}

// noteEdgeGates records what the function holds besides the edge's ends.
func (w *walker) noteEdgeGates(x edge, holds []Hold) {
	if w.e.gates == nil {
		w.e.gates = map[edgeKey][]gateWitness{}
	}
	except := []string{x.From, x.To}
	w.e.gates[x.key()] = append(w.e.gates[x.key()], gateWitness{fn: w.fn, held: classesHeld(holds, false, except), shared: classesHeld(holds, true, except)})
}

// noteCallSite records what a call of fn holds.
func (w *walker) noteCallSite(fn *ssa.Function, holds []Hold) {
	if w.e.callSites == nil {
		w.e.callSites = map[*ssa.Function][]gateWitness{}
	}
	w.e.callSites[fn] = append(w.e.callSites[fn], gateWitness{fn: w.fn, held: exclusiveClasses(holds)})
}

// gated reports whether one lock class is held at every witness of every
// edge of c, exclusively at every witness of at least one edge.
func (e *engine) gated(c cycle) bool {
	var common []string                     // held in some mode at every witness so far
	exclusiveSomewhere := map[string]bool{} // held exclusively at every witness of an edge
	for i, x := range c.edges {
		ws := e.gates[x.key()]
		if !local(x) || len(ws) == 0 {
			return false
		}
		var anyMode, exclusive []string
		for j, w := range ws {
			ex := unionClasses(w.held, e.entryHeld(w.fn, map[*ssa.Function]bool{}))
			all := unionClasses(ex, w.shared)
			if j == 0 {
				anyMode, exclusive = all, ex
			} else {
				anyMode, exclusive = intersectClasses(anyMode, all), intersectClasses(exclusive, ex)
			}
		}
		for _, class := range exclusive {
			exclusiveSomewhere[class] = true
		}
		if i == 0 {
			common = anyMode
		} else {
			common = intersectClasses(common, anyMode)
		}
		if len(common) == 0 {
			return false
		}
	}
	return slices.ContainsFunc(common, func(class string) bool { return exclusiveSomewhere[class] })
}

// entryHeld lists the exclusive classes held whenever fn runs (see above).
func (e *engine) entryHeld(fn *ssa.Function, visiting map[*ssa.Function]bool) []string {
	if held, ok := e.entryCache[fn]; ok {
		return held
	}
	var own []string
	if info := e.infos[fn]; info != nil {
		own = slices.DeleteFunc(exclusiveClasses(info.releases), func(c string) bool { return slices.Contains(info.partial, c) })
	}
	sites := e.callSites[fn]
	if visiting[fn] || len(sites) == 0 || e.exportedFunc(fn) {
		return own
	}
	visiting[fn] = true
	var callers []string
	for i, s := range sites {
		held := unionClasses(s.held, e.entryHeld(s.fn, visiting))
		if i == 0 {
			callers = held
		} else {
			callers = intersectClasses(callers, held)
		}
	}
	delete(visiting, fn)
	out := unionClasses(own, callers)
	if len(visiting) == 0 {
		if e.entryCache == nil {
			e.entryCache = map[*ssa.Function][]string{}
		}
		e.entryCache[fn] = out
	}
	return out
}

// exportedFunc: callers outside the package may call fn, or callers the
// package does not name (a closure, a function used as a value).
func (e *engine) exportedFunc(fn *ssa.Function) bool {
	if fn.Parent() != nil {
		return !onlyCalled(fn)
	}
	if obj := fn.Object(); obj == nil || obj.Exported() {
		return true
	}
	if e.valueUsed == nil {
		e.valueUsed = map[*ssa.Function]bool{}
		var ops []*ssa.Value
		for _, f := range e.p.Funcs {
			for _, b := range f.Blocks {
				for _, instr := range b.Instrs {
					ops = instr.Operands(ops[:0])
					for i, op := range ops {
						if g, ok := (*op).(*ssa.Function); ok {
							_, call := instr.(ssa.CallInstruction)
							if !call || i != 0 {
								e.valueUsed[g] = true
							}
						}
					}
				}
			}
		}
	}
	return e.valueUsed[fn]
}

// onlyCalled reports whether every use of the closure fn is a call of it
// on the same goroutine (not go, not kept or passed on).
func onlyCalled(fn *ssa.Function) bool {
	found := false
	for _, b := range fn.Parent().Blocks {
		for _, instr := range b.Instrs {
			mc, ok := instr.(*ssa.MakeClosure)
			if !ok || mc.Fn != fn {
				continue
			}
			found = true
			for _, r := range *mc.Referrers() {
				c, ok := r.(*ssa.Call)
				if !ok || c.Call.Value != ssa.Value(mc) || slices.Contains(c.Call.Args, ssa.Value(mc)) {
					return false
				}
			}
		}
	}
	return found
}

func unionClasses(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func intersectClasses(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
