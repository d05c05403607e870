package locks

import (
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
		if o.Class != h.Class || o.Maybe || o.Opaque || o.Keyed || o.Path == h.Path {
			continue
		}
		v := w.e.classVars[o.Class]
		if v == nil || !v.IsField() || lockop.ClassKey(v) != o.Class {
			continue
		}
		owner := lockop.EnclosingType(v)
		if at, ok := w.e.objs.Singleton(owner); ok {
			return o, ", the same lock: the program makes one " + owner.Obj().Name() + " (at " + w.e.at(at) + "),"
		}
	}
	return Hold{}, ""
}
