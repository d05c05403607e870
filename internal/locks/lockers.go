package locks

import (
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// lockerHold describes the lock a sync.Locker value stands for (a Cond's
// L, a Locker field, see objects.LockerOf) as a new hold; ok is false when
// the Locker's origin is unknown.
func (w *walker) lockerHold(lv ssa.Value, shared bool, pos token.Pos) (Hold, bool) {
	l, ok := w.e.objs.LockerOf(lv)
	if !ok {
		return Hold{}, false
	}
	return w.lockHold(l, shared, pos)
}

// lockHold describes a lock resolved by objects as a new hold.
func (w *walker) lockHold(l objects.Lock, shared bool, pos token.Pos) (Hold, bool) {
	if types.IsInterface(l.Base.Type()) && len(l.Fields) == 0 {
		return Hold{}, false
	}
	shared = shared || l.Shared
	if len(l.Fields) == 0 {
		return w.holdOf(l.Base, shared, pos), true
	}
	return w.fieldsHold(l, shared, pos), true
}

// fieldsHold is holdOf for the lock at l.Fields from l.Base, a lock with
// no SSA value in this function (c.cond.L for the c.mu the Cond was made
// with elsewhere).
func (w *walker) fieldsHold(l objects.Lock, shared bool, pos token.Pos) Hold {
	root, parts := splitPath(w.fn, l.Base)
	t := l.Base.Type()
	var rest strings.Builder
	for _, f := range l.Fields {
		_, isPtr := f.Type().Underlying().(*types.Pointer)
		parts = append(parts, part{Name: f.Name(), Base: objects.NamedOf(t), Deref: isPtr})
		rest.WriteString("." + f.Name())
		t = f.Type()
	}
	last := l.Fields[len(l.Fields)-1]
	h := Hold{Path: w.e.joinCanonical(root, parts), Shared: shared, Pos: pos, Opaque: types.IsInterface(last.Type()),
		Class: lockop.ClassKey(last), Name: lockop.ShortName(last)}
	w.e.classVars[h.Class] = last
	if _, isPtr := last.Type().Underlying().(*types.Pointer); !isPtr {
		// The lock is a value field: refined by how its struct was reached.
		if n := len(l.Fields); n == 1 {
			h.Sub = w.e.objs.Via(l.Base)
		} else if _, isStruct := l.Fields[n-2].Type().Underlying().(*types.Struct); isStruct {
			h.Sub = lockop.ClassKey(l.Fields[n-2])
			w.e.subVars[h.Sub] = l.Fields[n-2]
		}
	}
	if lockop.InsideObject(l.Base.Type(), rest.String()) {
		h.Obj = w.e.objs.Origin(w.fn, l.Base)
	}
	return h
}
