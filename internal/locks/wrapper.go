package locks

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// A mutex wrapper type (gVisor generates one per lock: a struct holding a
// sync.RWMutex whose Lock also records lock-order state; a Locker that
// counts or logs) has Lock and Unlock methods whose summarised effect is
// on the mutex inside it. A field (or package var) of such a type is the
// lock: its Lock and Unlock lock it, as checklocks reads any Mutex type's
// methods, and as a sync.Mutex would. Following the summary instead would
// hold the wrapper's inner mutex, which no guard names, and whose class
// every field of that type shares (every lock of gVisor's stack one lock
// class). Declared effects still win, and so do summaries holding inner
// locks that annotations name.

// guardWrapper reports whether callee, a Locker method called on lv,
// runs on a field or package var of a mutex wrapper type and declares no
// effect, and either annotations name that field or none name the locks
// inside the wrapper that its summary would hold instead (a wrapper
// whose inner lock the annotations name, as lockerdecl's, keeps its
// summary).
func (e *engine) guardWrapper(callee *ssa.Function, lv ssa.Value) bool {
	if callee == nil || callee.Pkg == nil || callee.Pkg.Pkg.Path() == "sync" || e.declaresEffect(callee) {
		return false
	}
	v := guardFieldOf(lv)
	if v == nil || !e.pureWrapper(v.Type()) {
		return false
	}
	if e.guardsAnnotatedVar(v) {
		return true
	}
	sum := e.summaryOf(callee)
	if sum == nil || len(sum.acquires)+len(sum.releases) == 0 {
		return false
	}
	for _, hs := range [][]Hold{sum.acquires, sum.releases} {
		for _, h := range hs {
			if root, _ := rootOf(h.Path); root != "p0" || e.guardsAnnotated(h.Class) {
				return false
			}
		}
	}
	return true
}

// nestedOp recognises gVisor's NestedLock(i) and NestedUnlock(i) (a lock
// taken while another lock of the same type is held) on a guard field of
// a mutex wrapper: Lock and Unlock of it.
func (e *engine) nestedOp(call *ssa.CallCommon) (lockop.Op, ssa.Value) {
	fn := call.StaticCallee()
	if call.IsInvoke() || fn == nil || fn.Signature.Recv() == nil || len(call.Args) != 2 || !lockop.IsLocker(fn.Signature.Recv().Type()) {
		return lockop.None, nil
	}
	var op lockop.Op
	switch fn.Name() {
	case "NestedLock":
		op = lockop.Lock
	case "NestedUnlock":
		op = lockop.Unlock
	default:
		return lockop.None, nil
	}
	if !e.guardWrapper(fn, call.Args[0]) {
		return lockop.None, nil
	}
	return op, call.Args[0]
}

// guardFieldOf is the field or package var lv addresses (&x.mu, &pkgMu).
func guardFieldOf(lv ssa.Value) *types.Var {
	switch x := lv.(type) {
	case *ssa.FieldAddr:
		return lockop.FieldOf(x)
	case *ssa.Global:
		v, _ := x.Object().(*types.Var)
		return v
	}
	return nil
}

// lockerNamed says whether a method name is one through which a pure
// wrapper's lock is taken and released: a Locker name, or one starting
// with it (gVisor's mutexes add NestedLock, DowngradeLock, RLockBypass).
func lockerNamed(name string) bool {
	for _, p := range []string{"Lock", "Unlock", "RLock", "RUnlock", "TryLock", "TryRLock", "Nested", "Downgrade"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// pureWrapper reports whether t (a mutex wrapper's type) takes and
// releases its inner locks only through its Locker-named methods: etcd's
// batchTx, which also locks through lock() and LockInsideApply(), is not
// one, and treating its Unlock as the field's while lock() holds the
// inner mutex would leave that held forever. Cached per type.
func (e *engine) pureWrapper(t types.Type) bool {
	n := objects.NamedOf(t)
	if n == nil {
		return false
	}
	if b, ok := e.pureWrappers[n]; ok {
		return b
	}
	e.pureWrappers[n] = false // a recursive question is answered no
	prog := e.p.SSA.Pkg.Prog
	mset := prog.MethodSets.MethodSet(types.NewPointer(n))
	pure := true
	for sel := range mset.Methods() {
		if lockerNamed(sel.Obj().Name()) {
			continue
		}
		fn := prog.MethodValue(sel)
		if fn == nil {
			continue
		}
		if e.locksReceiver(e.canonical(fn), n, map[*ssa.Function]bool{}) {
			pure = false
			break
		}
	}
	e.pureWrappers[n] = pure
	return pure
}

// locksReceiver reports whether fn, a method of n, takes or releases a
// lock inside its receiver. Summaries are not complete while this
// package is summarised, so a method of this package is read directly:
// a lock operation on the receiver, or a call of another such method of
// n; an imported method's summary (from facts) is complete.
func (e *engine) locksReceiver(fn *ssa.Function, n *types.Named, seen map[*ssa.Function]bool) bool {
	if fn == nil || seen[fn] {
		return false
	}
	seen[fn] = true
	if !e.p.FuncSet[fn] {
		sum := e.summaryOf(fn)
		return sum != nil && len(sum.acquires)+len(sum.releases)+len(sum.tries) > 0
	}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			call, ok := instr.(ssa.CallInstruction)
			if !ok {
				continue
			}
			c := call.Common()
			if op, lv := lockop.Classify(c); op != lockop.None && lv != nil {
				if root, _ := rootOf(pathOf(fn, lv)); root == "p0" {
					return true
				}
			}
			if callee := c.StaticCallee(); methodOf(callee, n) && !lockerNamed(callee.Name()) && e.locksReceiver(callee, n, seen) {
				return true
			}
		}
	}
	return false
}

// methodOf reports whether fn is a method of n (pointer or value receiver).
func methodOf(fn *ssa.Function, n *types.Named) bool {
	return fn != nil && fn.Signature.Recv() != nil && objects.NamedOf(fn.Signature.Recv().Type()) == n
}

// declaresEffect reports whether fn declares acquiring or releasing a lock.
func (e *engine) declaresEffect(fn *ssa.Function) bool {
	for _, it := range items(e.p.FuncDecl(fn)) {
		switch directive.Verb(it.Verb) {
		case directive.Acquires, directive.AcquiresShared, directive.Releases, directive.ReleasesShared:
			return true
		}
	}
	return false
}
