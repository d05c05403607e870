package locks

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// inert reports whether walking fn from an empty state can neither change
// its summary nor report anything: it takes, releases and declares no
// lock, blocks on nothing, touches no guarded state, creates no closure,
// defers nothing and calls no function whose summary says otherwise. Most
// functions of a package with locks are such functions; skipping their
// dataflow is most of the engine's time on real code.
//
// It must stay in step with walker.instr: every instruction the transfer
// functions act on makes a function non-inert.
func (e *engine) inert(fn *ssa.Function) bool {
	if len(items(e.p.FuncDecl(fn))) > 0 {
		return false // declared contracts are checked at the returns
	}
	w := &walker{e: e, fn: fn}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if !w.inertInstr(instr) {
				return false
			}
		}
	}
	return true
}

func (w *walker) inertInstr(instr ssa.Instruction) bool {
	switch in := instr.(type) {
	case *ssa.Defer, *ssa.Go, *ssa.MakeClosure, *ssa.RunDefers, *ssa.Send, *ssa.Select:
		return false
	case *ssa.UnOp:
		if in.Op == token.ARROW {
			return false
		}
		if gl, ok := in.X.(*ssa.Global); ok && in.Op == token.MUL {
			return w.e.guardOf(globalVar(gl)) == nil
		}
	case *ssa.Store:
		if gl, ok := in.Addr.(*ssa.Global); ok {
			return w.e.guardOf(globalVar(gl)) == nil
		}
	case *ssa.FieldAddr:
		return w.e.guardOf(lockop.FieldOf(in)) == nil
	case *ssa.Call:
		return w.inertCall(&in.Call)
	}
	return true
}

func (w *walker) inertCall(call *ssa.CallCommon) bool {
	if op, _ := w.e.classify(call); op != lockop.None {
		return false
	}
	if ops, what := w.callOps(call); len(ops) > 0 || what != "" {
		return false
	}
	for _, a := range call.Args {
		if gl, ok := a.(*ssa.Global); ok && w.e.guardOf(globalVar(gl)) != nil {
			return false
		}
	}
	if !call.IsInvoke() && (w.calledParam(w.fn, call.Value) != "" || w.elemOfParam(call.Value) != "") || w.formatsOwnVariadic(call) {
		return false // a param call, for the summary
	}
	for _, t := range w.targets(call) {
		if t.exact && len(items(w.e.p.FuncDecl(t.fn))) > 0 {
			return false // checkCallDecl
		}
		if _, ok := w.e.runsArgument(t.fn); ok {
			return false
		}
		if sum := w.e.summaryOf(t.fn); sum != nil && !sum.empty() {
			return false
		}
	}
	return true
}

func (f *funcInfo) empty() bool {
	return len(f.takes) == 0 && len(f.acquires) == 0 && len(f.releases) == 0 && len(f.chans) == 0 && len(f.tries) == 0 && len(f.unlocks) == 0 && len(f.blocks) == 0 && len(f.paramCalls) == 0
}

func (s State) empty() bool {
	return len(s.holds) == 0 && len(s.defers) == 0 && len(s.released) == 0 && !s.outer
}

func globalVar(gl *ssa.Global) *types.Var {
	v, _ := gl.Object().(*types.Var)
	return v
}
