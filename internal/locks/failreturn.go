package locks

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// A guard clause that returns an error (`if s == "" { return "",
// ErrEmptyPrefix }`, `if err != nil { return err }`) does not make what
// follows it conditional in the sense the engine counts: on every path
// where the function does its work, it takes the lock. So a return that
// surely fails is not one of the returns a take must dominate to be
// certain, as long as some other return is left (moby's TruncIndex.Get
// read-locks after its empty-prefix guard; cockroach's gossip visitor
// takes g.mu after two error returns).

// A function without an error result fails through a nil: `inner :=
// newInnerCluster(c); if inner == nil { return nil }` gives up because
// the constructor failed, when that constructor returns nil only on its
// own failure paths (kubesphere's addCluster write-locks after it).

// successReturns returns fn's return blocks without those that surely
// fail; all of them when no other return is left.
func successReturns(fn *ssa.Function, all []*ssa.BasicBlock) []*ssa.BasicBlock {
	failing := failingReturn
	if !returnsError(fn) {
		failing = afterFailedCall
	}
	var out []*ssa.BasicBlock
	for _, b := range all {
		if !failing(b) {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return beyondGuards(all)
	}
	return out
}

// beyondGuards returns the returns of a function that always fails (a
// stub, a shrunk reproduction, a dialer whose success path is elsewhere)
// without its guard clauses, those on a branch where a call's error is
// not nil: past `if err != nil { return nil, err }` the function does its
// work on every path, as when a success return is left. All of them when
// nothing else is left.
func beyondGuards(all []*ssa.BasicBlock) []*ssa.BasicBlock {
	var out []*ssa.BasicBlock
	for _, b := range all {
		if !afterCallError(b) {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}

// afterCallError reports whether b runs only where the error result of a
// call, of any callee (a func value too), is not nil.
func afterCallError(b *ssa.BasicBlock) bool {
	for d := b.Idom(); d != nil; d = d.Idom() {
		x, onNonNil := nilTest(d)
		if x != nil && failingCall(x) != nil && onNonNil.Dominates(b) && len(onNonNil.Preds) == 1 {
			return true
		}
	}
	return false
}

// returnsError reports whether fn's last result is an error, or of a
// type that is one (lnd's *LinkError).
func returnsError(fn *ssa.Function) bool {
	res := fn.Signature.Results()
	return res.Len() > 0 && types.Implements(res.At(res.Len()-1).Type(), errorType)
}

// failingReturn reports whether return block b's error result is surely
// not nil: a concrete error, a sentinel package variable, a newly made
// error (`&LinkError{...}` too), or a value b runs only when it is not
// nil.
func failingReturn(b *ssa.BasicBlock) bool {
	ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
	if !ok || len(ret.Results) == 0 {
		return false
	}
	v := storedResult(b, ret.Results[len(ret.Results)-1])
	switch v := v.(type) {
	case *ssa.MakeInterface, *ssa.Alloc:
		return true
	case *ssa.UnOp:
		if globalLoad(v) {
			return true
		}
	case *ssa.Call:
		if madeError(v) {
			return true
		}
	}
	return knownNonNil(b, v)
}

// madeError reports whether call makes a new error (errors.New,
// fmt.Errorf): never nil.
func madeError(call *ssa.Call) bool {
	fn := call.Call.StaticCallee()
	if fn == nil || fn.Pkg == nil {
		return false
	}
	path := fn.Pkg.Pkg.Path()
	return path == "errors" && fn.Name() == "New" || path == "fmt" && fn.Name() == "Errorf"
}

// storedResult returns the value a function with deferred calls stored
// into its result variable before return r in b (its returns load the
// results from locals the deferred calls may change), or r itself.
func storedResult(b *ssa.BasicBlock, r ssa.Value) ssa.Value {
	load, ok := r.(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return r
	}
	local, ok := load.X.(*ssa.Alloc)
	if !ok || local.Heap {
		return r
	}
	for i := len(b.Instrs) - 1; i >= 0; i-- {
		if st, ok := b.Instrs[i].(*ssa.Store); ok && st.Addr == local {
			return st.Val
		}
	}
	return r
}

// knownNonNil reports whether b runs only on the branch of a test that
// finds v not nil.
func knownNonNil(b *ssa.BasicBlock, v ssa.Value) bool {
	for d := b.Idom(); d != nil; d = d.Idom() {
		if x, onNonNil := nilTest(d); x != nil && sameLoad(x, v) && onNonNil.Dominates(b) && len(onNonNil.Preds) == 1 {
			return true
		}
	}
	return false
}

// sameLoad reports whether x and v are one value, or two loads of one
// field of one value or of one package variable (`if c.err != nil {
// return c.err }` loads the field twice).
func sameLoad(x, v ssa.Value) bool {
	if x == v {
		return true
	}
	lx, ok1 := x.(*ssa.UnOp)
	lv, ok2 := v.(*ssa.UnOp)
	if !ok1 || !ok2 || lx.Op != token.MUL || lv.Op != token.MUL {
		return false
	}
	if lx.X == lv.X {
		_, global := lx.X.(*ssa.Global)
		return global
	}
	fx, ok1 := lx.X.(*ssa.FieldAddr)
	fv, ok2 := lv.X.(*ssa.FieldAddr)
	return ok1 && ok2 && fx.X == fv.X && fx.Field == fv.Field
}

// afterFailedCall reports whether return block b returns only nils (or
// nothing) and runs only when a call's result is nil, the callee giving
// nil on its failure paths only.
func afterFailedCall(b *ssa.BasicBlock) bool {
	ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
	if !ok {
		return false
	}
	for _, r := range ret.Results {
		if !objects.NilConstant(r) {
			return false
		}
	}
	for d := b.Idom(); d != nil; d = d.Idom() {
		x, onNonNil := nilTest(d)
		if x == nil || onNonNil.Dominates(b) {
			continue
		}
		call, ok := x.(*ssa.Call)
		if !ok {
			continue
		}
		onNil := d.Succs[0]
		if onNil == onNonNil {
			onNil = d.Succs[1]
		}
		if onNil.Dominates(b) && len(onNil.Preds) == 1 {
			return nilOnlyOnFailure(call.Call.StaticCallee())
		}
	}
	return false
}

// nilOnlyOnFailure reports whether fn, returning one pointer, returns nil
// only on the branch where a call it makes fails (`if err != nil {
// return nil }`), and something else elsewhere.
func nilOnlyOnFailure(fn *ssa.Function) bool {
	if fn == nil || len(fn.Blocks) == 0 || fn.Signature.Results().Len() != 1 {
		return false
	}
	nils, others := 0, 0
	for _, b := range returnBlocks(fn) {
		ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
		if !ok || len(ret.Results) != 1 {
			return false
		}
		if !objects.NilConstant(ret.Results[0]) {
			others++
			continue
		}
		if !onFailureBranch(b) {
			return false
		}
		nils++
	}
	return nils > 0 && others > 0
}

// onFailureBranch reports whether b runs only where a call's error result
// tested against nil is not nil.
func onFailureBranch(b *ssa.BasicBlock) bool {
	for d := b.Idom(); d != nil; d = d.Idom() {
		if onFail, _ := failureBranch(d); onFail != nil && onFail.Dominates(b) && len(onFail.Preds) == 1 {
			return true
		}
	}
	return false
}
