package locks

import (
	"go/token"
	"go/types"
	"slices"
	"strconv"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/roots"
)

// A goroutine that runs a function it was handed (`go tm.run(keephouse)`
// in a Timer's Start, `go func() { defer t.alive.Done(); f() }()` in a
// tomb's Go) takes what that function takes, though its own summary
// cannot say: the call is a param call nobody resolves, since no caller
// waits for a goroutine. Its unblocking operation waits for those takes
// when the call reaches it: the loop that calls keephouse receives the
// stop message only after keephouse returns, and the deferred Done runs
// after f. The functions are the ones the package passes down to the
// goroutine (objects.FuncsOf), one level of handed-on callbacks included
// (a wrapper closure that calls what it captured).
//
// Handed functions are matched by object: those passed to the spawning
// method on the object the blocking call is made on (`m.ticks.Start(f)`
// with `m.ticks.Stop()`, a local group's Go with its Wait), as far as
// the two receivers can be named (a field, an allocation, a package var).
// A group used by main for its callers and by Reload for its probes is
// two groups.

// boundTaking reports whether root r, by a function it was handed, takes
// a lock m blocks on before it reaches the opposite of one of ops.
func (e *engine) boundTaking(r *roots.Root, ops []chanOp, m takeMode) bool {
	return e.boundTaker(r, ops, m) != ""
}

// boundTaker names the function handed to root r that takes a lock m
// blocks on before r reaches the opposite of one of ops, "" when none.
func (e *engine) boundTaker(r *roots.Root, ops []chanOp, m takeMode) string {
	info := e.infos[r.Func]
	if info == nil || !hasOpposite(info.chans, ops) {
		return ""
	}
	if taker := e.queuedTaker(r, ops, m); taker != "" {
		return taker
	}
	for _, pc := range info.paramCalls {
		if pc.Via != nil || pc.Elems || pc.Format {
			continue
		}
		v := paramValue(r.Func, pc.Path)
		if v == nil {
			continue
		}
		call := callAt(r.Func, pc.Pos, v)
		if call == nil || !e.reachesOpposite(r.Func, call, ops) {
			continue
		}
		for _, h := range e.handed(r, v) {
			if m.recv != "" && h.recv != "" && h.recv != m.recv {
				continue // handed to another object's goroutines
			}
			if taker := e.handedTaker(h.fn, m, 0); taker != nil {
				return e.funcName(taker)
			}
		}
	}
	return ""
}

// maxQueued bounds the functions a queue of work may hold for
// queuedTaker: more is a general-purpose pool, whose jobs say nothing of
// one another.
const maxQueued = 4

// queuedTaker is boundTaker for the work a goroutine takes from a queue
// (`todo := f.pendings[0]; todo(ctx)`, a job read from a slice, map,
// channel or field the package fills): a function put there that takes a lock m
// blocks on, when the call reaches the opposite of one of ops (etcd's
// FIFO scheduler, stopped under the store's lock while the running
// compaction job waits for it).
func (e *engine) queuedTaker(r *roots.Root, ops []chanOp, m takeMode) string {
	for _, q := range e.queuedCalls(r.Func) {
		if !e.reachesOpposite(r.Func, q.call, ops) {
			continue
		}
		for _, g := range q.fns {
			if taker := e.handedTaker(g, m, 0); taker != nil {
				return e.funcName(taker)
			}
		}
	}
	return ""
}

// queuedCall is a call of a func value read from a container or field,
// with the functions the package puts there.
type queuedCall struct {
	call *ssa.Call
	fns  []*ssa.Function
}

// queuedCalls lists fn's calls of queued func values (see queuedTaker).
func (e *engine) queuedCalls(fn *ssa.Function) []queuedCall {
	if qs, ok := e.queued[fn]; ok {
		return qs
	}
	var out []queuedCall
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			c, ok := instr.(*ssa.Call)
			if !ok || c.Call.IsInvoke() || c.Call.StaticCallee() != nil {
				continue
			}
			switch calledValue(&c.Call).(type) {
			case *ssa.Builtin, *ssa.Parameter, *ssa.FreeVar, *ssa.MakeClosure:
				continue // a param call is boundTaker's; a closure runs where it is made
			}
			if fns := e.objs.FuncsOf(fn, c.Call.Value); len(fns) > 0 && len(fns) <= maxQueued {
				out = append(out, queuedCall{call: c, fns: fns})
			}
		}
	}
	if e.queued == nil {
		e.queued = map[*ssa.Function][]queuedCall{}
	}
	e.queued[fn] = out
	return out
}

// handedFunc is a function handed down to a goroutine, with the object
// the spawning method was called on ("" when unknown).
type handedFunc struct {
	fn   *ssa.Function
	recv string
}

// handed lists the functions v, a param or free variable of root r's
// function, may hold: through the spawning method's parameter to what
// each call of it passes, with that call's receiver; else all FuncsOf
// finds.
func (e *engine) handed(r *roots.Root, v ssa.Value) []handedFunc {
	var out []handedFunc
	spawn, idx := e.spawnParam(r, v)
	if spawn == nil {
		for _, g := range e.objs.FuncsOf(r.Func, v) {
			out = append(out, handedFunc{fn: g})
		}
		return out
	}
	for _, c := range e.objs.CallsOf(spawn) {
		arg := objects.CallArg(c.Common(), idx)
		if arg == nil {
			continue
		}
		recv := ""
		if spawn.Signature.Recv() != nil {
			recv = objectKey(objects.CallArg(c.Common(), 0))
		}
		for _, g := range e.objs.FuncsOf(c.Parent(), arg) {
			out = append(out, handedFunc{fn: g, recv: recv})
		}
	}
	return out
}

// spawnParam returns the function whose go statement started r and the
// index of its parameter that v carries into the goroutine (a go
// statement's argument, or a closure's captured variable), nil when v
// is not one of them.
func (e *engine) spawnParam(r *roots.Root, v ssa.Value) (*ssa.Function, int) {
	switch x := v.(type) {
	case *ssa.FreeVar:
		parent, b, ok := e.objs.Binding(r.Func, x)
		if !ok {
			return nil, -1
		}
		if p, ok := cellValue(b).(*ssa.Parameter); ok && p.Parent() == parent {
			return parent, slices.Index(parent.Params, p)
		}
		return nil, -1
	case *ssa.Parameter:
		g := e.goStatement(r)
		if g == nil {
			return nil, -1
		}
		i := slices.Index(r.Func.Params, x)
		if i < 0 || i >= len(g.Call.Args) {
			return nil, -1
		}
		p, ok := g.Call.Args[i].(*ssa.Parameter)
		if !ok {
			return nil, -1
		}
		return p.Parent(), slices.Index(p.Parent().Params, p)
	}
	return nil, -1
}

// goStatement finds the go statement that starts root r.
func (e *engine) goStatement(r *roots.Root) *ssa.Go {
	if e.goStmts == nil {
		e.goStmts = map[token.Pos]*ssa.Go{}
		for _, fn := range e.p.Funcs {
			for _, b := range fn.Blocks {
				for _, instr := range b.Instrs {
					if g, ok := instr.(*ssa.Go); ok {
						e.goStmts[g.Pos()] = g
					}
				}
			}
		}
	}
	if g := e.goStmts[r.Pos]; g != nil && g.Call.StaticCallee() == r.Func {
		return g
	}
	return nil
}

// receiverAt names the receiver of the walked function's method call at
// pos (a blocking call into Stop or Wait), "" for none.
func (w *walker) receiverAt(pos token.Pos) string {
	c := callAtPos(w.fn, pos, nil)
	if c == nil {
		return ""
	}
	if callee := c.Common().StaticCallee(); callee != nil && callee.Signature.Recv() != nil && len(c.Common().Args) > 0 {
		return objectKey(c.Common().Args[0])
	}
	return ""
}

// objectKey names the object v points to by where it lives, "" when it
// cannot: a field (of any object of its struct), an allocation, a
// package var.
func objectKey(v ssa.Value) string {
	for range 8 {
		switch x := v.(type) {
		case *ssa.ChangeType:
			v = x.X
			continue
		case *ssa.MakeInterface:
			v = x.X
			continue
		case *ssa.UnOp:
			if fa, ok := x.X.(*ssa.FieldAddr); ok && x.Op == token.MUL {
				if f := lockop.FieldOf(fa); f != nil {
					return "field:" + lockop.ClassKey(f)
				}
			}
			if g, ok := x.X.(*ssa.Global); ok && x.Op == token.MUL {
				return "global:" + g.RelString(nil)
			}
		case *ssa.FieldAddr:
			if f := lockop.FieldOf(x); f != nil {
				return "field:" + lockop.ClassKey(f)
			}
		case *ssa.Alloc:
			if stored := objects.StoredOnce(x); stored != nil && objects.IsCell(x) {
				v = stored
				continue
			}
			return "alloc:" + strconv.Itoa(int(x.Pos()))
		case *ssa.Global:
			return "global:" + x.RelString(nil)
		}
		return ""
	}
	return ""
}

// paramValue is the parameter or free variable a param call's path names.
func paramValue(fn *ssa.Function, path string) ssa.Value {
	if i := paramIndex(path, "p"); i >= 0 && i < len(fn.Params) {
		return fn.Params[i]
	}
	if i := paramIndex(path, "f"); i >= 0 && i < len(fn.FreeVars) {
		return fn.FreeVars[i]
	}
	return nil
}

// maxHandedDepth bounds the wrappers handedTaker looks through.
const maxHandedDepth = 2

// handedTaker returns g (a method value's method), or a function g
// calls of its own func values (a wrapper closure), that takes a lock m
// blocks on; nil when none does.
func (e *engine) handedTaker(g *ssa.Function, m takeMode, depth int) *ssa.Function {
	if bm := e.boundMethod(g); bm != nil {
		g = bm // a method value runs the method
	}
	sum := e.summaryOf(g)
	if sum == nil {
		return nil
	}
	if m.blocks(sum.takes) {
		return g
	}
	if depth >= maxHandedDepth {
		return nil
	}
	for _, pc := range sum.paramCalls {
		inner := paramValue(g, pc.Path)
		if inner == nil || pc.Via != nil {
			continue
		}
		for _, f := range e.objs.FuncsOf(g, inner) {
			if taker := e.handedTaker(f, m, depth+1); taker != nil {
				return taker
			}
		}
	}
	return nil
}

// callAt finds fn's call of v at pos.
func callAt(fn *ssa.Function, pos token.Pos, v ssa.Value) ssa.CallInstruction {
	return callAtPos(fn, pos, func(c ssa.CallInstruction) bool { return calledValue(c.Common()) == v })
}

// calledValue is the func value c calls, seen through the load of a
// captured variable's cell.
func calledValue(c *ssa.CallCommon) ssa.Value {
	if ld, ok := c.Value.(*ssa.UnOp); ok && ld.Op == token.MUL {
		return ld.X
	}
	return c.Value
}

// reachesOpposite reports whether, in fn, some path from call (around
// loops too) comes to an operation opposite to one of ops: a send,
// receive, select case, close or Done on the same channel or WaitGroup,
// or a deferred one (run on the way out).
func (e *engine) reachesOpposite(fn *ssa.Function, call ssa.CallInstruction, ops []chanOp) bool {
	opposite := func(key string, send bool) bool {
		return key != "" && slices.ContainsFunc(ops, func(op chanOp) bool { return op.Key == key && op.Send != send })
	}
	at := func(instr ssa.Instruction) bool {
		switch x := instr.(type) {
		case *ssa.Send:
			return opposite(e.chanKey(fn, x.Chan, 0), true)
		case *ssa.UnOp:
			return x.Op == token.ARROW && opposite(e.chanKey(fn, x.X, 0), false)
		case *ssa.Select:
			return slices.ContainsFunc(x.States, func(st *ssa.SelectState) bool {
				return opposite(e.chanKey(fn, st.Chan, 0), st.Dir == types.SendOnly)
			})
		case *ssa.Defer:
			return e.doneOrClose(fn, x.Common(), opposite)
		case *ssa.Call:
			return e.doneOrClose(fn, x.Common(), opposite)
		}
		return false
	}
	// Deferred operations run on every way out: any path to a return.
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if d, ok := instr.(*ssa.Defer); ok && at(d) {
				return true
			}
		}
	}
	start := call.Block()
	for _, instr := range start.Instrs[slices.Index(start.Instrs, ssa.Instruction(call))+1:] {
		if at(instr) {
			return true
		}
	}
	return objects.BlockReachesAny(start.Succs, nil, func(b *ssa.BasicBlock) bool { return slices.ContainsFunc(b.Instrs, at) })
}

// doneOrClose reports whether c is a close or WaitGroup.Done that
// opposite accepts (both unblock: a send's side).
func (e *engine) doneOrClose(fn *ssa.Function, c *ssa.CallCommon, opposite func(string, bool) bool) bool {
	if b, ok := c.Value.(*ssa.Builtin); ok && b.Name() == "close" && len(c.Args) == 1 {
		return opposite(e.chanKey(fn, c.Args[0], 0), true)
	}
	if waitGroupMethod(c) == "Done" {
		return opposite(e.chanKey(fn, c.Args[0], 0), true)
	}
	return false
}
