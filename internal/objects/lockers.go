package objects

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// A sync.Locker made from a lock is that lock: mu.RLocker() is mu's read
// side, the L of a Cond made by sync.NewCond(l) is l. A Locker or a Cond
// kept in an unexported struct field is resolved through the package's
// stores into that field: when every one makes it from a lock of the same
// object (c.cond = sync.NewCond(&c.mu)), reading the field from any object
// names that object's lock; when every one makes it on a mutex of its own
// (sync.NewCond(&sync.Mutex{})), the Cond's L is that lock.

// Lock is a lock named from a value of a function: the lock Base points
// to, or the one reached from Base through Fields (struct field
// selections, through pointer fields too), on its read side when Shared.
type Lock struct {
	Base   ssa.Value
	Fields []*types.Var
	Shared bool
}

// relLock is a lock relative to the object a field is read from.
type relLock struct {
	fields []*types.Var
	shared bool
}

// maxLockerDepth bounds the chain of Lockers made from Lockers.
const maxLockerDepth = 4

// LockerOf returns the lock the sync.Locker value v stands for, ok false
// when its origin is unknown (a parameter, another package's value).
func (x *Index) LockerOf(v ssa.Value) (Lock, bool) { return promotedLock(x.lockerOf(v, 0)) }

// CondLock returns the lock that cond, a *sync.Cond, waits with (its L).
func (x *Index) CondLock(cond ssa.Value) (Lock, bool) { return promotedLock(x.condLock(cond, 0)) }

// promotedLock extends l, when it is a struct that embeds a sync mutex and
// locks through the methods that mutex promotes, to that mutex: the Cond
// of sync.NewCond(&s.mu), with mu a struct{ sync.Mutex; n int }, waits
// with s.mu.Mutex, which is what s.mu.Lock() takes.
func promotedLock(l Lock, ok bool) (Lock, bool) {
	if !ok {
		return l, false
	}
	t := l.Base.Type()
	if n := len(l.Fields); n > 0 {
		t = l.Fields[n-1].Type()
	}
	if f := embeddedMutex(t); f != nil {
		l.Fields = append(slices.Clip(l.Fields), f)
	}
	return l, true
}

// embeddedMutex is the sync mutex field that a struct t (or *t) embeds
// and whose Lock it promotes; nil when there is none.
func embeddedMutex(t types.Type) *types.Var {
	if p, isPtr := t.Underlying().(*types.Pointer); isPtr {
		t = p.Elem()
	}
	st, isStruct := t.Underlying().(*types.Struct)
	if !isStruct || lockop.IsSyncType(t) {
		return nil
	}
	obj, index, _ := types.LookupFieldOrMethod(types.NewPointer(t), true, nil, "Lock")
	fn, isFn := obj.(*types.Func)
	if !isFn || len(index) != 2 || fn.Pkg() == nil || fn.Pkg().Path() != "sync" || !st.Field(index[0]).Embedded() {
		return nil
	}
	return st.Field(index[0])
}

func (x *Index) lockerOf(v ssa.Value, depth int) (Lock, bool) {
	if depth > maxLockerDepth {
		return Lock{}, false
	}
	v = Underlying(v)
	if mu, ok := lockop.ReadSide(v); ok {
		l, ok := x.lockerOf(mu, depth+1)
		l.Shared = true
		return l, ok
	}
	if !types.IsInterface(v.Type()) {
		return Lock{Base: v}, true
	}
	if f := x.returnedMutex(v); f != nil {
		return Lock{Base: v, Fields: []*types.Var{f}}, true
	}
	load, ok := v.(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return Lock{}, false
	}
	fa, ok := load.X.(*ssa.FieldAddr)
	if !ok {
		return Lock{}, false
	}
	if isCondL(fa) {
		return x.condLock(fa.X, depth+1)
	}
	return x.fieldLock(fa, depth)
}

// condLock resolves the L of cond: a sync.NewCond call or a
// &sync.Cond{L: l} of this function, or a Cond kept in a field (by
// pointer or by value).
func (x *Index) condLock(cond ssa.Value, depth int) (Lock, bool) {
	if depth > maxLockerDepth {
		return Lock{}, false
	}
	cond = Underlying(cond)
	if arg, ok := lockop.NewCondArg(cond); ok {
		return x.lockerOf(arg, depth+1)
	}
	if a, ok := cond.(*ssa.Alloc); ok {
		if l := storedL(a); l != nil {
			return x.lockerOf(l, depth+1)
		}
		return Lock{}, false
	}
	if load, ok := cond.(*ssa.UnOp); ok && load.Op == token.MUL {
		cond = load.X // a *sync.Cond read from a field
	}
	if fa, ok := cond.(*ssa.FieldAddr); ok {
		return x.fieldLock(fa, depth)
	}
	return Lock{}, false
}

// fieldLock resolves a Locker or Cond kept in field fa of an object.
func (x *Index) fieldLock(fa *ssa.FieldAddr, depth int) (Lock, bool) {
	f := lockop.FieldOf(fa)
	if f == nil {
		return Lock{}, false
	}
	rel, ok := x.lockerField(f, depth)
	if !ok {
		return Lock{}, false
	}
	return Lock{Base: fa.X, Fields: rel.fields, Shared: rel.shared}, true
}

// lockerField returns the lock every store into f makes it from, relative
// to the object f belongs to; ok is false when a store says otherwise or
// there is none.
func (x *Index) lockerField(f *types.Var, depth int) (relLock, bool) {
	if x.lockers == nil {
		x.lockers = map[*types.Var]*relLock{}
	}
	if r, seen := x.lockers[f]; seen {
		return derefRel(r)
	}
	x.lockers[f] = nil // a field made from itself resolves to nothing
	var out *relLock
	for _, st := range x.lockerStores(f) {
		r, ok := x.storedLock(st, depth)
		if !ok || out != nil && (out.shared != r.shared || !slices.Equal(out.fields, r.fields)) {
			out = nil
			break
		}
		out = &r
	}
	x.lockers[f] = out
	return derefRel(out)
}

func derefRel(r *relLock) (relLock, bool) {
	if r == nil {
		return relLock{}, false
	}
	return *r, true
}

// storedLock resolves one store into a Locker or Cond field (or into the
// L of a Cond value field) relative to the object stored into.
func (x *Index) storedLock(st *ssa.Store, depth int) (relLock, bool) {
	fa := st.Addr.(*ssa.FieldAddr)
	obj := fa.X
	var l Lock
	var ok bool
	switch {
	case isCondL(fa): // c.cond.L = &c.mu
		inner, isField := fa.X.(*ssa.FieldAddr)
		if !isField {
			return relLock{}, false
		}
		obj = inner.X
		l, ok = x.lockerOf(st.Val, depth+1)
	case lockop.IsCond(fa.Type().(*types.Pointer).Elem()):
		l, ok = x.condLock(st.Val, depth+1)
	default:
		l, ok = x.lockerOf(st.Val, depth+1)
	}
	if !ok {
		return relLock{}, false
	}
	fields, ok := selectionsFrom(Underlying(obj), l)
	if !ok {
		fields, ok = freshLock(Underlying(obj), l, fa)
	}
	return relLock{fields: fields, shared: l.Shared}, ok
}

// freshLock names l, a mutex allocated by the function that makes the
// Locker or Cond, from obj: the pointer field of obj it is also stored
// into (lock := new(sync.RWMutex); &queue{lock: lock, active:
// sync.NewCond(lock)}), or, when it is used for nothing else, the lock the
// Locker or Cond stored at fa keeps for itself (sync.NewCond(&sync.Mutex{})).
func freshLock(obj ssa.Value, l Lock, fa *ssa.FieldAddr) ([]*types.Var, bool) {
	a, ok := Underlying(l.Base).(*ssa.Alloc)
	if !ok || len(l.Fields) > 0 || IsCell(a) {
		return nil, false
	}
	var field *types.Var
	for _, r := range *a.Referrers() {
		switch u := r.(type) {
		case *ssa.Store:
			sfa, ok := u.Addr.(*ssa.FieldAddr)
			if !ok || u.Val != a || Underlying(sfa.X) != obj || field != nil {
				return nil, false // stored elsewhere too
			}
			field = lockop.FieldOf(sfa)
		case *ssa.FieldAddr, *ssa.DebugRef:
			// initialising the mutex itself
		case *ssa.Call:
			if !makesLocker(u) {
				return nil, false
			}
		case *ssa.MakeInterface:
			for _, rr := range *u.Referrers() {
				c, isCall := rr.(*ssa.Call)
				st, isStore := rr.(*ssa.Store)
				if isCall && makesLocker(c) || isStore && st.Addr == fa {
					continue
				}
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if field != nil {
		return []*types.Var{field}, true
	}
	return ownLock(fa), true
}

// makesLocker reports whether call is sync.NewCond or RLocker.
func makesLocker(call *ssa.Call) bool {
	_, isCond := lockop.NewCondArg(call)
	_, isRead := lockop.ReadSide(call)
	return isCond || isRead
}

// ownLock is the path, from the object stored into by a store at fa, of
// the lock a Locker or Cond field keeps for itself: the Locker field, or
// the Cond's L.
func ownLock(fa *ssa.FieldAddr) []*types.Var {
	f := lockop.FieldOf(fa)
	if isCondL(fa) {
		return []*types.Var{lockop.FieldOf(fa.X.(*ssa.FieldAddr)), f}
	}
	if p, isPtr := f.Type().Underlying().(*types.Pointer); isPtr {
		if l := condL(p.Elem()); l != nil {
			return []*types.Var{f, l}
		}
	}
	return []*types.Var{f}
}

// isCondL reports whether fa selects the L of a Cond.
func isCondL(fa *ssa.FieldAddr) bool {
	f := lockop.FieldOf(fa)
	return f != nil && f.Name() == "L" && lockop.IsCond(fa.X.Type())
}

// storedL returns the one value stored into the L of the Cond allocated
// by a (&sync.Cond{L: l}), or nil.
func storedL(a *ssa.Alloc) ssa.Value { return StoredInField(a, isCondL) }

// StoredInField returns the one value stored into a field of the object
// allocated by a that field selects (&Info{Txn: txn}), nil when there is
// none or more than one.
func StoredInField(a *ssa.Alloc, field func(*ssa.FieldAddr) bool) ssa.Value {
	var val ssa.Value
	for _, r := range *a.Referrers() {
		fa, ok := r.(*ssa.FieldAddr)
		if !ok || !field(fa) {
			continue
		}
		for _, rr := range *fa.Referrers() {
			if st, ok := rr.(*ssa.Store); ok && st.Addr == fa {
				if val != nil {
					return nil
				}
				val = st.Val
			}
		}
	}
	return val
}

// selectionsFrom expresses l as field selections from obj: l's base must
// be obj itself, or reached from it through field selections.
func selectionsFrom(obj ssa.Value, l Lock) ([]*types.Var, bool) {
	v := l.Base
	rev := slices.Clone(l.Fields)
	slices.Reverse(rev)
	for range maxSteps {
		if Underlying(v) == obj {
			slices.Reverse(rev)
			return rev, true
		}
		switch s := v.(type) {
		case *ssa.FieldAddr:
			rev = append(rev, lockop.FieldOf(s))
			v = s.X
		case *ssa.UnOp:
			fa, ok := s.X.(*ssa.FieldAddr)
			if !ok || s.Op != token.MUL {
				return nil, false
			}
			rev = append(rev, lockop.FieldOf(fa))
			v = fa.X
		default:
			return nil, false
		}
		if rev[len(rev)-1] == nil {
			return nil, false
		}
	}
	return nil, false
}

// lockerStores returns the package's stores into f, when f holds a Locker
// or a *sync.Cond, or into its L when f is a sync.Cond (a nil store
// resets it and says nothing). Only an unexported field of the package's
// own type: another package may store into any other.
func (x *Index) lockerStores(f *types.Var) []*ssa.Store {
	if f.Exported() || !x.ownField(f) {
		return nil
	}
	stores := x.fieldRecord().stores[f]
	if l := condL(f.Type()); l != nil {
		stores = nil
		for _, st := range x.fieldRecord().stores[l] {
			if inner, ok := st.Addr.(*ssa.FieldAddr).X.(*ssa.FieldAddr); ok && lockop.FieldOf(inner) == f {
				stores = append(stores, st)
			}
		}
	} else if !holdsLocker(f.Type()) {
		return nil
	}
	var out []*ssa.Store
	for _, st := range stores {
		if c, isConst := st.Val.(*ssa.Const); !isConst || !c.IsNil() {
			out = append(out, st)
		}
	}
	return out
}

// condL returns the field L of t when t is sync.Cond (not a pointer).
func condL(t types.Type) *types.Var {
	if _, isPtr := t.Underlying().(*types.Pointer); isPtr || !lockop.IsCond(t) {
		return nil
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	for i := range st.NumFields() {
		if st.Field(i).Name() == "L" {
			return st.Field(i)
		}
	}
	return nil
}

// holdsLocker reports whether a field of type t keeps a Locker: a
// sync.Locker-like interface or a *sync.Cond (a Cond by value is
// resolved through its L, whose stores are collected as its own field).
func holdsLocker(t types.Type) bool {
	if types.IsInterface(t) {
		return lockop.IsLocker(t)
	}
	_, isPtr := t.Underlying().(*types.Pointer)
	return isPtr && lockop.IsCond(t)
}

// returnedMutex is the sync mutex a Locker interface value v locks when v
// is the result of a call of the package whose every return converts a
// value of one type that embeds the mutex and locks through it (etcd's
// backend.BatchTx() returning its *batchTx, whose Lock is its embedded
// sync.Mutex's): that embedded field; nil otherwise.
func (x *Index) returnedMutex(v ssa.Value) *types.Var {
	call, ok := v.(*ssa.Call)
	if !ok {
		return nil
	}
	callees := x.Callees(call.Common())
	if len(callees) != 1 {
		return nil
	}
	var concrete types.Type
	for _, res := range ReturnedValues(callees[0]) {
		mi, ok := res.(*ssa.MakeInterface)
		if !ok || concrete != nil && !types.Identical(concrete, mi.X.Type()) {
			return nil
		}
		concrete = mi.X.Type()
	}
	if concrete == nil {
		return nil
	}
	return embeddedMutex(concrete)
}
