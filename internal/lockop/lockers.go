package lockop

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Lockers made from a mutex by the sync package: (*sync.RWMutex).RLocker
// returns the read side of the mutex, and sync.NewCond keeps the Locker
// it is given as the Cond's L.

// ReadSide returns the RWMutex v is the read side of, when v is the result
// of (*sync.RWMutex).RLocker (also promoted: c.RLocker() on a struct
// embedding one).
func ReadSide(v ssa.Value) (ssa.Value, bool) {
	call, ok := v.(*ssa.Call)
	if !ok || len(call.Call.Args) != 1 || !isSyncFunc(call.Call.StaticCallee(), "RWMutex", "RLocker") {
		return nil, false
	}
	return call.Call.Args[0], true
}

// NewCondArg returns the Locker passed to sync.NewCond, when v is the
// result of that call.
func NewCondArg(v ssa.Value) (ssa.Value, bool) {
	call, ok := v.(*ssa.Call)
	if !ok || len(call.Call.Args) != 1 || !isSyncFunc(call.Call.StaticCallee(), "", "NewCond") {
		return nil, false
	}
	return call.Call.Args[0], true
}

// CondMethod returns the name of the sync.Cond method call calls
// ("Wait", "Signal", "Broadcast") and the Cond, or "" when it is none.
func CondMethod(call *ssa.CallCommon) (string, ssa.Value) {
	fn := call.StaticCallee()
	if len(call.Args) == 0 || !isSyncFunc(fn, "Cond", "") {
		return "", nil
	}
	return fn.Name(), call.Args[0]
}

// IsCond reports whether t is sync.Cond or a pointer to one.
func IsCond(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "sync" && n.Obj().Name() == "Cond"
}

// isSyncFunc reports whether fn is package sync's function name (recv
// "") or method name of type recv (name "": any method of recv).
func isSyncFunc(fn *ssa.Function, recv, name string) bool {
	if fn == nil || fn.Pkg == nil || fn.Pkg.Pkg.Path() != "sync" || name != "" && fn.Name() != name {
		return false
	}
	sig := fn.Signature
	if recv == "" {
		return sig.Recv() == nil
	}
	if sig.Recv() == nil {
		return false
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Name() == recv
}
