package locks

import (
	"go/token"
	"strconv"
	"strings"

	"github.com/confinelint/confinelint/internal/objects"
)

// Helpers that lock or unlock one key's lock (KeyLocks.LockKey(k): look
// the key's mutex up under the container's lock, release that, lock the
// mutex) leave held a lock their callers cannot name: it is reached
// through a lookup, or a phi of the lookup and a mutex made on a miss.
// Such a keyed lock (Hold.Keyed) is a summary effect by class: the path
// "c:" + class (objects.ClassPath). At each call the caller holds it under
// a path of its own, the class path at the call's position, so two keys
// taken in turn are two locks (no double lock, same-class: no edge), and
// an unlock helper's release of that class, by any path, releases one of
// them (State.underOtherName). Only the order against other classes
// counts: the edges.

// keyedEffect reports whether h, held on every return under a path
// callers cannot name, is a keyed lock left held for them: not one
// returned with its object, nor of an object created here.
func (w *walker) keyedEffect(h Hold) bool {
	if !h.Keyed || h.Class == "" || portable(h.Path) || w.fresh(h.Path) {
		return false
	}
	for _, r := range w.rets {
		if w.returned(h.Path, r) {
			return false
		}
	}
	return true
}

// byClass names a keyed lock callers cannot name by its class.
func byClass(h Hold) Hold {
	if h.Keyed && h.Class != "" && !portable(h.Path) || objects.IsClassPath(h.Path) {
		h.Path = objects.ClassPath(h.Class)
	}
	return h
}

// keyedAt is the path under which a caller holds a keyed lock a callee
// left held at pos: one lock per call.
func keyedAt(path string, pos token.Pos) string {
	if !objects.IsClassPath(path) {
		return path
	}
	base, _, _ := strings.Cut(path, "@")
	return base + "@" + strconv.Itoa(int(pos))
}

// heldByClass finds a keyed lock of class held under a class path.
func (s State) heldByClass(class string) (Hold, bool) {
	for _, o := range s.holds {
		if o.Class == class && objects.IsClassPath(o.Path) {
			return o, true
		}
	}
	return Hold{}, false
}
