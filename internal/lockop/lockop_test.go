package lockop

import (
	"go/types"
	"testing"
)

func TestOpNames(t *testing.T) {
	for op, want := range map[Op]string{Lock: "Lock", RUnlock: "RUnlock", TryRLock: "TryRLock", None: "none"} {
		if got := op.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", op, got, want)
		}
	}
	if !RLock.Shared() || Lock.Shared() || !TryLock.Acquires() || Unlock.Acquires() {
		t.Error("Shared/Acquires disagree with the operation table")
	}
}

// A type with Lock/Unlock methods is a Locker by method set, whatever its
// name; one whose Lock takes a parameter is not.
func TestIsLockerByMethodSet(t *testing.T) {
	pkg := types.NewPackage("p", "p")
	mk := func(name string, withParam bool) *types.Named {
		tn := types.NewTypeName(0, pkg, name, nil)
		n := types.NewNamed(tn, types.NewStruct(nil, nil), nil)
		recv := types.NewVar(0, pkg, "x", types.NewPointer(n))
		lockSig := types.NewSignatureType(recv, nil, nil, nil, nil, false)
		if withParam {
			lockSig = types.NewSignatureType(recv, nil, nil, types.NewTuple(types.NewVar(0, pkg, "n", types.Typ[types.Int])), nil, false)
		}
		n.AddMethod(types.NewFunc(0, pkg, "Lock", lockSig))
		n.AddMethod(types.NewFunc(0, pkg, "Unlock", types.NewSignatureType(recv, nil, nil, nil, nil, false)))
		return n
	}
	if !IsLocker(mk("Gate", false)) {
		t.Error("Gate with Lock()/Unlock() on *Gate is a Locker")
	}
	if IsLocker(mk("Mutexish", true)) {
		t.Error("Lock(int) is not sync.Locker's Lock")
	}
	if IsRWMutex(mk("Gate2", false)) {
		t.Error("no RLock/RUnlock: not an RWMutex")
	}
}
