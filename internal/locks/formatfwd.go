package locks

import (
	"go/token"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// A logger that formats under its own lock passes its variadic operands
// on to fmt (`l.Lock(); defer l.Unlock(); s := fmt.Sprintf(format,
// v...)`): fmt calls an operand's String there, with the logger's lock
// held, and a String that logs through the same logger locks it again
// (hugo's DistinctLogger formatting a Page whose String used a deprecated
// accessor that logs). The operands are known only to the logger's
// callers, so the call is recorded in the summary as a param call of the
// variadic parameter (Format), passed on by wrappers like a func value,
// and each caller applies the String methods of its own operands under
// the locks held at the formatting.

// recordFormatCall records a call of a library formatting function
// that formats the walked function's own variadic parameter, with the
// locks definitely held.
func (w *walker) recordFormatCall(call *ssa.CallCommon, pos token.Pos, s State) {
	if w.final && w.formatsOwnVariadic(call) {
		w.info.addParamCall(paramCall{Path: pathOf(w.fn, call.Args[len(call.Args)-1]), Held: definite(s.holds), Fn: w.e.funcName(w.fn), Pos: pos, cond: w.condStep(), branch: w.branchStep(), Format: true})
	}
}

// formatsOwnVariadic reports whether call is a library formatting
// function (formatFuncs) given the walked function's variadic parameter
// as its operands.
func (w *walker) formatsOwnVariadic(call *ssa.CallCommon) bool {
	if call.IsInvoke() || len(call.Args) == 0 || !w.fn.Signature.Variadic() {
		return false
	}
	if call.Args[len(call.Args)-1] != w.fn.Params[len(w.fn.Params)-1] {
		return false
	}
	callee := call.StaticCallee()
	if callee == nil || callee.Pkg == nil {
		return false
	}
	_, ok := formatFuncs[callee.Pkg.Pkg.Path()][callee.Name()]
	return ok
}

// formatParamTakes applies, for the format param call pc of t's callee,
// the String and Error methods of the operands this caller passes in
// ops (the callee's variadic parameter), as functions passed for pc:
// with the format known here, only operands whose verb calls the method.
func (w *walker) formatParamTakes(t *target, ops ssa.Value, pc paramCall, held []Hold, via *callChain, cond, branch int, pos token.Pos, s State) {
	if len(held) == 0 {
		// With no lock held where it formats, the wrapper's formatting
		// is the call's own (formatted): already applied there.
		return
	}
	format, _, ok := w.e.formatIndex(t.fn, 0)
	if !ok || format >= len(t.vals) {
		return
	}
	args := append(slices.Clone(t.vals[:format+1]), ops)
	if format < 0 {
		args = []ssa.Value{ops}
	}
	for _, sc := range w.e.stringCalls(args, format) {
		ft := target{fn: sc.fn, vals: []ssa.Value{sc.operand}, exact: sc.exact}
		if sum := w.e.summaryOf(sc.fn); sum != nil {
			w.paramTakes(&ft, sum, pc, held, via, cond, branch, pos, s)
		}
	}
}
