package roots

import (
	"golang.org/x/tools/go/ssa"
)

// A function value passed to a call is assumed to run on the caller's
// goroutine (sort.Slice, a withLock helper). For a callee of this package
// the assumption is checked against what the callee does with it:
//
//   - calls it (or passes it to code assumed to call it): it runs here;
//   - starts it on a goroutine of its own (go f()): a goroutine root, as a
//     //confined:spawns parameter would be;
//   - only hands it on (sends it, stores it, captures it in a closure that
//     is sent or stored): it escapes, as "c.requests <- f" written inline
//     would, and its callers are unknown. A handoff helper such as
//
//	func (c *C) ask(ctx context.Context, f func()) error {
//		c.requests <- func() { f(); close(done) } ...
//
//     runs f on whichever goroutine receives it, not on ask's caller.

// use is what a function does with a function value it is given.
type use uint8

const (
	useHandsOff use = iota // sends, stores or drops it (or: still being computed)
	useStarts              // runs it on a new goroutine
	useCalls               // runs it on the current goroutine
)

// argUse says what the package function fn does with its parameter i
// (receiver excluded).
func (b *builder) argUse(fn *ssa.Function, i int) use {
	if fn.Signature.Recv() != nil {
		i++ // fn.Params holds the receiver first
	}
	if i >= len(fn.Params) || len(fn.Blocks) == 0 {
		return useCalls // no body to look at: keep the assumption
	}
	return b.valueUse(fn.Params[i])
}

// valueUse classifies what the function holding v does with the function
// value v, memoised per value. A value being classified counts as handed
// off, so recursion ends.
func (b *builder) valueUse(v ssa.Value) use {
	if u, ok := b.uses[v]; ok {
		return u
	}
	if b.uses == nil {
		b.uses = map[ssa.Value]use{}
	}
	b.uses[v] = useHandsOff
	u := useHandsOff
	if refs := v.Referrers(); refs != nil {
		for _, r := range *refs {
			u = max(u, b.refUse(v, r))
		}
	}
	b.uses[v] = u
	return u
}

// refUse is what instruction r, a use of the function value v, does with
// it.
func (b *builder) refUse(v ssa.Value, r ssa.Instruction) use {
	switch r := r.(type) {
	case *ssa.Go:
		return useStarts // go v(), or go g(v): on the new goroutine either way
	case *ssa.Send, *ssa.Store, *ssa.MapUpdate, *ssa.Return, *ssa.MakeInterface:
		return useHandsOff
	case ssa.CallInstruction:
		call := r.Common()
		if call.Value == v {
			return useCalls
		}
		u := useHandsOff
		for j, arg := range call.Args {
			if arg != v {
				continue
			}
			callee := b.local(call.StaticCallee())
			if callee == nil || call.IsInvoke() {
				return useCalls // unknown code: assumed to call it here
			}
			if call.StaticCallee().Signature.Recv() != nil {
				j-- // Args holds the receiver first
			}
			if j < 0 {
				return useCalls
			}
			u = max(u, b.argUse(callee, j))
		}
		return u
	case *ssa.MakeClosure:
		// v is captured: what the closure does with its copy, bounded by
		// what happens to the closure.
		fn, ok := r.Fn.(*ssa.Function)
		if !ok {
			return useCalls
		}
		u := useHandsOff
		for k, bound := range r.Bindings {
			if bound == v && k < len(fn.FreeVars) {
				u = max(u, min(b.valueUse(fn.FreeVars[k]), b.valueUse(r)))
			}
		}
		return u
	case *ssa.ChangeType, *ssa.Phi:
		return b.valueUse(r.(ssa.Value))
	}
	return useCalls // anything else: keep the assumption
}
