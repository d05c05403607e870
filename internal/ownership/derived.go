package ownership

import (
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// Rule 6: a reference read out of owned state points at owned data.
//
// Inside the function that reads it, the read itself is the access that
// is judged. What the read does not cover is the reference travelling to
// another function that runs elsewhere: captured by a closure (a worker's
// job, a timer), passed to a goroutine start, or sent on a channel. So
// derived accesses are collected where a captured reference is used (in
// the closure, or at a call there handing it to a function that uses it),
// hand-offs at go statements and asynchronous registrations, and touches
// after a send in the sending function.

// collectDerived adds to e.direct the accesses closures make through
// references their creator read from owned state, and records hand-offs
// and sends to judge once contexts are known.
func (e *engine) collectDerived() {
	var ops []memOp
	for _, fn := range e.p.Funcs {
		for _, blk := range fn.Blocks {
			for _, instr := range blk.Instrs {
				ops = e.memOps(ops[:0], instr)
				for _, op := range ops {
					if e.ownedOp(op) {
						continue // a direct access, judged where it is
					}
					s := e.sourceOf(fn, op.base)
					if !s.owned || !s.crossed {
						continue
					}
					e.direct[fn] = append(e.direct[fn], access{role: s.role, kind: op.kind, pos: posOf(fn, op.at),
						state: e.opName(op), key: s.key, via: []string{s.state}, from: &s})
				}
				switch in := instr.(type) {
				case *ssa.Go:
					e.handOffs = append(e.handOffs, e.goHandOffs(fn, in)...)
				case *ssa.Send:
					e.sends = append(e.sends, sendSite{fn: fn, send: in})
				case ssa.CallInstruction:
					e.direct[fn] = append(e.direct[fn], e.crossedArgs(fn, in)...)
					e.handOffs = append(e.handOffs, e.asyncHandOffs(fn, in)...)
				}
			}
		}
	}
}

// crossedArgs returns the accesses a call makes by handing a captured
// owned reference to a package function that touches it.
func (e *engine) crossedArgs(fn *ssa.Function, in ssa.CallInstruction) []access {
	callee, args := e.callTarget(in.Common())
	if callee == nil {
		return nil
	}
	var out []access
	for i, arg := range args {
		if !isReference(arg.Type()) {
			continue
		}
		s := e.sourceOf(fn, arg)
		if !s.owned || !s.crossed {
			continue
		}
		u, ok := e.paramUse(callee, i)
		if !ok {
			continue
		}
		via := append([]string{s.state, e.name(callee)}, u.via...)
		out = append(out, access{role: s.role, kind: u.kind, pos: posOf(fn, in), state: e.argText(in.Common(), i, arg),
			key: s.key, via: via, last: u.state, from: &s})
	}
	return out
}

// callTarget returns the package function a call runs (a method value's
// method included) and the arguments its parameters receive, receiver
// first.
func (e *engine) callTarget(c *ssa.CallCommon) (*ssa.Function, []ssa.Value) {
	if c.IsInvoke() {
		return nil, nil
	}
	switch v := c.Value.(type) {
	case *ssa.Function:
		fn := v
		if o := fn.Origin(); o != nil {
			fn = o
		}
		if !e.p.FuncSet[fn] {
			return nil, nil
		}
		return fn, c.Args
	case *ssa.MakeClosure:
		if fn, ok := v.Fn.(*ssa.Function); ok && e.p.FuncSet[fn] {
			return fn, c.Args
		}
	}
	return nil, nil
}

// argText is how the user wrote argument i of a call (receiver first for
// a static method call), or a name rebuilt from SSA.
func (e *engine) argText(c *ssa.CallCommon, i int, v ssa.Value) string {
	args := e.argsAt(c.Pos())
	if c.Signature().Recv() != nil && c.StaticCallee() != nil {
		i-- // the receiver is written before the call, not in it
	}
	if i >= 0 && i < len(args) {
		return args[i]
	}
	return e.valueText(v)
}

// use is what a function does with one of its parameters: the strongest
// touch of what it points to, in the function or in the package
// functions it passes it to.
type use struct {
	kind  kind
	state string   // the touch as written in the function that makes it
	via   []string // the functions it is passed through, after the first
}

// paramUse reports whether fn touches what its parameter i points to, and
// how (memoised; recursion counts as no touch).
func (e *engine) paramUse(fn *ssa.Function, i int) (use, bool) {
	key := paramKey{fn, i}
	if u, ok := e.uses[key]; ok {
		return u.use, u.ok
	}
	e.uses[key] = usage{} // in progress
	var best use
	found := false
	note := func(u use) {
		if !found || u.kind > best.kind {
			best, found = u, true
		}
	}
	var ops []memOp
	for _, g := range objects.Nested(fn) {
		for _, blk := range g.Blocks {
			for _, instr := range blk.Instrs {
				ops = e.memOps(ops[:0], instr)
				for _, op := range ops {
					if e.ownedOp(op) {
						continue // a direct access, judged where it is
					}
					if s := e.sourceOf(g, op.base); s.param == i && s.fn == fn {
						note(use{kind: op.kind, state: e.opName(op)})
					}
				}
				call, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				callee, args := e.callTarget(call.Common())
				for j, arg := range args {
					if callee == nil || !isReference(arg.Type()) {
						break
					}
					if s := e.sourceOf(g, arg); s.param == i && s.fn == fn {
						if u, ok := e.paramUse(callee, j); ok {
							note(use{kind: u.kind, state: u.state, via: append([]string{e.name(callee)}, u.via...)})
						}
					}
				}
			}
		}
	}
	e.uses[key] = usage{best, found}
	return best, found
}

type paramKey struct {
	fn *ssa.Function
	i  int
}

type usage struct {
	use
	ok bool
}
