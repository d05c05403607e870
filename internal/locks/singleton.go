package locks

import (
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// singletonHeld finds the held lock h is under another path, or none,
// when the program makes one object of the struct that declares h's
// class (objects.Singleton): a lock field of that object is one lock,
// whatever path reaches it. why says so for the message.
func (w *walker) singletonHeld(s State, h Hold) (Hold, string) {
	if h.Class == "" || h.Opaque || h.Keyed {
		return Hold{}, ""
	}
	for _, o := range s.holds {
		if o.Class != h.Class || o.Maybe && !w.heldToReturn(o) || o.Opaque || o.Keyed || o.Path == h.Path {
			continue
		}
		v := w.e.classVars[o.Class]
		if v == nil || !v.IsField() || lockop.ClassKey(v) != o.Class {
			continue
		}
		owner := lockop.EnclosingType(v)
		if at, ok := w.e.objs.Singleton(owner); ok {
			one := owner.Obj().Name()
			if holder := w.e.objs.SingletonHolder(owner); holder != nil {
				one = holder.Obj().Name() + ", which holds the one " + one
			}
			return o, ", the same lock: the program makes one " + one + " (at " + w.e.at(at) + "),"
		}
		// A wrapper mutex's field is every holder's: the one object is
		// the holder's, named by the value field both reach it through.
		if sv := w.e.subVars[o.Sub]; sv != nil && o.Sub == h.Sub {
			if holder := lockop.EnclosingType(sv); holder != nil && holder != owner {
				if at, ok := w.e.objs.Singleton(holder); ok {
					return o, ", the same lock: the program makes one " + holder.Obj().Name() + " (at " + w.e.at(at) + "),"
				}
			}
		}
	}
	return Hold{}, ""
}

// noteSubVar records the value field a Sub computed from x names (x =
// &s.mu, a struct held by value), for singletonHeld.
func (e *engine) noteSubVar(sub string, x ssa.Value) {
	if fx, ok := x.(*ssa.FieldAddr); ok && sub != "" {
		if f := lockop.FieldOf(fx); f != nil && lockop.ClassKey(f) == sub {
			e.subVars[sub] = f
		}
	}
}
