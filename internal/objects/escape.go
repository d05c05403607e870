package objects

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
)

// What a function does with a parameter (ParamFlow): a value >= 0 is the
// index of another parameter whose memory it is stored into and nothing
// else (`so.handler = h` keeps h exactly as long as so keeps it).
const (
	FlowEscapes = facts.FlowEscapes // handed to other code: a goroutine, a global, an unknown call
	FlowStays   = facts.FlowStays   // kept by nothing once the call returns (returning it is not keeping)

	flowUnknown    = -4
	flowInProgress = -3
)

// Escapes reports whether fn, a function of this package, lets its i-th
// parameter escape: publishes it by the rule of publications (hands it to
// a goroutine, stores it into memory it does not own, passes it to a call
// that keeps it). A method that only reads and writes its receiver's
// fields, or calls helpers that do, keeps it: `c.init()` on a fresh c
// publishes nothing. Storing it into another parameter's memory counts
// here (see ParamFlow for the finer answer). Recursion counts as escaping.
func (x *Index) Escapes(fn *ssa.Function, i int) bool {
	return x.ParamFlow(fn, i) != FlowStays
}

// ParamFlow returns what fn, a function of this package, does with its
// i-th parameter: FlowStays, FlowEscapes, or the index of the one other
// parameter whose memory alone keeps it. Recursion counts as escaping.
func (x *Index) ParamFlow(fn *ssa.Function, i int) int {
	if len(fn.Blocks) == 0 || i >= len(fn.Params) {
		return FlowEscapes
	}
	st := x.flows[fn]
	if st == nil {
		st = make([]int, len(fn.Params))
		for j := range st {
			st[j] = flowUnknown
		}
		x.flows[fn] = st
	}
	switch st[i] {
	case flowUnknown:
	case flowInProgress:
		return FlowEscapes
	default:
		return st[i]
	}
	st[i] = flowInProgress
	st[i] = x.flowOf(fn.Params[i], i)
	delete(x.pubs, fn.Params[i]) // the flow is all that is asked of a parameter
	return st[i]
}

// flowOf classifies the publications of parameter p (index i): none, all
// into one other parameter's memory, or anything else.
func (x *Index) flowOf(p *ssa.Parameter, i int) int {
	into := FlowStays
	for _, pub := range x.publications(p) {
		j, ok := x.intoParam[pub]
		switch {
		case !ok || j < 0:
			return FlowEscapes
		case j == i:
			// Into its own memory: nothing more than it already is.
		case into == FlowStays || into == j:
			into = j
		default:
			return FlowEscapes
		}
	}
	return into
}

// paramIndex returns the index of v among fn's parameters, or -1.
func paramIndex(fn *ssa.Function, v ssa.Value) int {
	if p, ok := v.(*ssa.Parameter); ok && p.Parent() == fn {
		for i, q := range fn.Params {
			if q == p {
				return i
			}
		}
	}
	return -1
}

// markInto records that publication pub stores into the memory of
// parameter j of its function (FlowEscapes: into other memory); one call
// seen doing two different things with its arguments is an escape for
// every argument, so that no parameter is taken to stay because another
// one went into its memory at the same call.
func (x *Index) markInto(pub ssa.Instruction, j int) {
	if old, ok := x.intoParam[pub]; ok && old != j {
		j = FlowEscapes
	}
	x.intoParam[pub] = j
}

// importedFlow returns what another package's function does with its i-th
// parameter, as its ParamFlows fact says (SetImported); FlowEscapes when
// nothing is known.
func (x *Index) importedFlow(callee *ssa.Function, i int) int {
	fn, ok := callee.Object().(*types.Func)
	if !ok || x.imported == nil || !declaredElsewhere(callee) {
		return FlowEscapes // a wrapper's parameters need not be its method's
	}
	flows := x.imported(fn)
	if i >= len(flows) {
		return FlowEscapes
	}
	return flows[i]
}

// SetImported installs the lookup of other packages' parameter flows (the
// ParamFlows facts their analysis exported); nil flows mean unknown.
func (x *Index) SetImported(flows func(*types.Func) []int) { x.imported = flows }

// Flows returns ParamFlow for each of fn's parameters that can hold an
// object (FlowEscapes for the others), or nil when every one escapes: what
// a ParamFlows fact carries.
func (x *Index) Flows(fn *ssa.Function) []int {
	flows := make([]int, len(fn.Params))
	useful := false
	for i, p := range fn.Params {
		flows[i] = FlowEscapes
		if pointerLike(p.Type()) {
			flows[i] = x.ParamFlow(fn, i)
		}
		useful = useful || flows[i] != FlowEscapes
	}
	if !useful {
		return nil
	}
	return flows
}

// declaredElsewhere reports whether fn is another package's function as
// go/ssa creates it from type information (no body), not a wrapper, whose
// parameters need not be its method's.
func declaredElsewhere(fn *ssa.Function) bool {
	// go/ssa's words for a function of a package built without syntax
	// (methods: "from type information (on demand)").
	return fn.Synthetic == "" || strings.HasPrefix(fn.Synthetic, "from type information")
}
