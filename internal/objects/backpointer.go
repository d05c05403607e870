package objects

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// BackPointer says that in every object of Owner, Field holds an object
// whose Back field points back to it: `c.tr = newClient(c)` with
// newClient storing its argument into the new client's owner makes
// c.tr.owner c itself, so a lock taken through c.tr.owner is c's lock
// (grpc's addrConn and its transport's onClose handler).
//
// Back may hold, instead of the owner, the address of one of the owner's
// fields, Lock: `c.exp = &Manager{coreLock: &c.stateLock}` makes
// c.exp.coreLock c's stateLock (vault's ExpirationManager).
type BackPointer struct {
	Owner       *types.Named
	Field, Back *types.Var
	Lock        *types.Var // the owner's field Back points to; nil for the owner
}

// BackPointers lists the package's back-pointers: Field and Back are this
// package's own fields (unexported, or in package main), every store into
// Field stores an object made with Back set to the object stored into,
// and Back is stored into only while its object is being made.
func (x *Index) BackPointers() []BackPointer {
	fo := x.fieldRecord()
	var out []BackPointer
	for f, stores := range fo.stores {
		owner, pointee := x.backPointerCandidate(f, stores)
		if owner == nil {
			continue
		}
		for back := range pointee.Fields() {
			if !x.localField(back) || !onlyAtCreation(fo.stores[back]) {
				continue
			}
			if lock, ok := pointsBack(stores, pointee, back); ok {
				out = append(out, BackPointer{Owner: owner, Field: f, Back: back, Lock: lock})
			}
		}
	}
	slices.SortFunc(out, func(a, b BackPointer) int {
		return strings.Compare(lockop.ClassKey(a.Field)+" "+a.Back.Name(), lockop.ClassKey(b.Field)+" "+b.Back.Name())
	})
	return out
}

// backPointerCandidate returns the named struct f belongs to and the
// struct f points to, when f is a local pointer field stored into here.
func (x *Index) backPointerCandidate(f *types.Var, stores []*ssa.Store) (*types.Named, *types.Struct) {
	if !x.localField(f) || len(stores) == 0 {
		return nil, nil
	}
	ptr, ok := f.Type().Underlying().(*types.Pointer)
	if !ok {
		return nil, nil
	}
	pointee, ok := ptr.Elem().Underlying().(*types.Struct)
	if !ok {
		return nil, nil
	}
	owner := NamedOf(stores[0].Addr.(*ssa.FieldAddr).X.Type())
	if owner == nil {
		return nil, nil
	}
	return owner, pointee
}

// pointsBack reports whether each store puts into the field an object
// whose back field (of struct pointee) holds the object stored into, or
// nil; or, every one of them, the address of the same field of that
// object, returned as lock.
func pointsBack(stores []*ssa.Store, pointee *types.Struct, back *types.Var) (lock *types.Var, ok bool) {
	idx := -1
	for i := range pointee.NumFields() {
		if pointee.Field(i) == back {
			idx = i
		}
	}
	objects := 0
	for _, st := range stores {
		if c, ok := st.Val.(*ssa.Const); ok && c.IsNil() {
			continue // no object, nothing to point back
		}
		base := plain(st.Addr.(*ssa.FieldAddr).X)
		held := storedField(plain(st.Val), idx, st, 0)
		if held == nil {
			return nil, false
		}
		var f *types.Var // nil: the owner itself
		if fa, isField := plain(held).(*ssa.FieldAddr); isField && plain(fa.X) == base {
			if f = lockop.FieldOf(fa); f == nil {
				return nil, false
			}
		} else if plain(held) != base {
			return nil, false
		}
		if objects > 0 && f != lock {
			return nil, false // the owner here, its field there
		}
		lock = f
		objects++
	}
	return lock, objects > 0
}

// onlyAtCreation reports whether every store is into a field of an
// object allocated in the storing function (its construction).
func onlyAtCreation(stores []*ssa.Store) bool {
	for _, st := range stores {
		a, ok := plain(st.Addr.(*ssa.FieldAddr).X).(*ssa.Alloc)
		if !ok || IsCell(a) {
			return false
		}
	}
	return true
}

// localField reports whether only this package can store into f: it is
// unexported, or its package is a main package, or it is declared in a
// _test.go file (only the package's tests see it, a program as closed as
// a main package: a deadlock reproduced as a test).
func (x *Index) localField(f *types.Var) bool {
	if f.Pkg() == nil {
		return false
	}
	if !f.Exported() || f.Pkg().Name() == "main" {
		return true
	}
	if len(x.funcs) == 0 {
		return false
	}
	return strings.HasSuffix(x.funcs[0].Prog.Fset.Position(f.Pos()).Filename, "_test.go")
}

// SelfPointer says that Field of every object of Owner holds that object
// itself (or nil): `hc.listener = hc`, a type that is its own default
// listener, so a lock taken through x.Field is x's own lock.
type SelfPointer struct {
	Owner *types.Named
	Field *types.Var
}

// SelfPointers lists the package's self-pointers: Field is this package's
// own field (localField) and every store into it stores the object it is
// a field of, through conversions, or nil.
func (x *Index) SelfPointers() []SelfPointer {
	var out []SelfPointer
	for f, stores := range x.fieldRecord().stores {
		if !x.localField(f) || len(stores) == 0 || !selfStores(stores) {
			continue
		}
		if owner := NamedOf(stores[0].Addr.(*ssa.FieldAddr).X.Type()); owner != nil {
			out = append(out, SelfPointer{Owner: owner, Field: f})
		}
	}
	slices.SortFunc(out, func(a, b SelfPointer) int {
		return strings.Compare(lockop.ClassKey(a.Field), lockop.ClassKey(b.Field))
	})
	return out
}

// selfStores reports whether each store puts into its field the object
// the field belongs to, or nil, and at least one stores an object.
func selfStores(stores []*ssa.Store) bool {
	objects := 0
	for _, st := range stores {
		if c, ok := st.Val.(*ssa.Const); ok && c.IsNil() {
			continue
		}
		if plain(st.Val) != plain(st.Addr.(*ssa.FieldAddr).X) {
			return false
		}
		objects++
	}
	return objects > 0
}

// PointedLock returns the lock field f always points to: f is this
// package's own pointer field (localField) and every store into it
// stores the address of field L of some object, the same L each time
// (`coreStateLock: &c.stateLock`). A lock taken through f is then of
// L's class. nil otherwise.
func (x *Index) PointedLock(f *types.Var) *types.Var {
	if f == nil || !x.localField(f) {
		return nil
	}
	if _, ok := f.Type().Underlying().(*types.Pointer); !ok {
		return nil
	}
	var lock *types.Var
	for _, st := range x.fieldRecord().stores[f] {
		fa, ok := plain(st.Val).(*ssa.FieldAddr)
		if !ok {
			return nil
		}
		l := lockop.FieldOf(fa)
		if l == nil || lock != nil && l != lock {
			return nil
		}
		lock = l
	}
	return lock
}
