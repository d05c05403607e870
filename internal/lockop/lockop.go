// Package lockop recognises lock operations in SSA by type and method set,
// never by type names as text, and names lock classes the way lockdep does:
// by the field or package variable that declares the lock.
package lockop

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Op is a lock operation.
type Op uint8

const (
	None Op = iota
	Lock
	Unlock
	RLock
	RUnlock
	TryLock
	TryRLock
	// Downgrade turns a write lock into a read lock without letting go
	// (gVisor's sync.RWMutex.DowngradeLock).
	Downgrade
)

var opByName = map[string]Op{
	"Lock": Lock, "Unlock": Unlock, "RLock": RLock, "RUnlock": RUnlock,
	"TryLock": TryLock, "TryRLock": TryRLock, "DowngradeLock": Downgrade,
}

// readOp is the operation on an RWMutex that a Locker operation on its
// read side (RLocker) performs.
var readOp = map[Op]Op{Lock: RLock, Unlock: RUnlock, TryLock: TryRLock, RLock: RLock, RUnlock: RUnlock, TryRLock: TryRLock}

func (o Op) String() string {
	for name, op := range opByName {
		if op == o {
			return name
		}
	}
	return "none"
}

// Shared reports whether the operation is on the read side of an RWMutex.
func (o Op) Shared() bool { return o == RLock || o == RUnlock || o == TryRLock }

// Acquires reports whether o takes the lock (TryLock only when it succeeds).
func (o Op) Acquires() bool { return o == Lock || o == RLock || o == TryLock || o == TryRLock }

// Classify recognises call as a lock operation and returns the operation
// and the lock value (a pointer to the mutex, or the Locker interface).
// Lock and Unlock of mu.RLocker() are mu's RLock and RUnlock.
func Classify(call *ssa.CallCommon) (Op, ssa.Value) {
	if call.IsInvoke() {
		op := opByName[call.Method.Name()]
		if op == None || !IsLocker(call.Value.Type()) {
			return None, nil
		}
		if mu, ok := ReadSide(call.Value); ok {
			return readOp[op], mu
		}
		return op, call.Value
	}
	fn := call.StaticCallee()
	if fn == nil || fn.Signature.Recv() == nil || len(call.Args) == 0 {
		return None, nil
	}
	op := opByName[fn.Name()]
	if op == None || !IsLocker(fn.Signature.Recv().Type()) {
		return None, nil
	}
	return op, call.Args[0]
}

// lockerMethods is the method set of sync.Locker.
var lockerMethods = []string{"Lock", "Unlock"}

// IsLocker reports whether t (or *t) has Lock() and Unlock() methods without
// parameters or results, i.e. implements sync.Locker.
func IsLocker(t types.Type) bool {
	for _, typ := range []types.Type{t, types.NewPointer(t)} {
		if _, isPtr := t.(*types.Pointer); isPtr && typ != t {
			continue
		}
		if hasNiladicMethods(typ, lockerMethods) {
			return true
		}
	}
	return false
}

// hasNiladicMethods reports whether t's method set has every method of
// names without parameters or results. LookupFieldOrMethod with addressable
// false answers for the method set proper, and unlike NewMethodSet it does
// not build the whole set: Classify asks this of every call of a method
// named Lock, Unlock...
func hasNiladicMethods(t types.Type, names []string) bool {
	for _, name := range names {
		obj, _, _ := types.LookupFieldOrMethod(t, false, nil, name)
		m, ok := obj.(*types.Func)
		if !ok {
			return false
		}
		sig, ok := m.Type().(*types.Signature)
		if !ok || sig.Params().Len() != 0 || sig.Results().Len() != 0 {
			return false
		}
	}
	return true
}

// IsRWMutex reports whether t (or *t) also has RLock and RUnlock.
func IsRWMutex(t types.Type) bool {
	if !IsLocker(t) {
		return false
	}
	if _, isPtr := t.(*types.Pointer); !isPtr {
		t = types.NewPointer(t)
	}
	return hasNiladicMethods(t, []string{"RLock", "RUnlock"})
}

// IsSyncType reports whether t (or what it points to) is a type of sync or
// sync/atomic: made to be used from any goroutine.
func IsSyncType(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	path := n.Obj().Pkg().Path()
	return path == "sync" || path == "sync/atomic"
}
