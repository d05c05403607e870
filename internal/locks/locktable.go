package locks

import (
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// A lock table hands out locks by key: `lock(key)` finds or makes the
// entry, takes its lock and returns nil (an error before taking anything),
// and `unlock(key)` finds the entry again and lets it go (minio's
// nsLockMap). The lock is held exactly when lock reports success, and no
// caller can name it: only the package's unlock half finds it. Such a
// hold is no inconsistent return when the package has that half: a
// function that unlocks a lock of the class, in an element of a map or
// slice field (lockop.Keyed), without locking it.

// tableAcquire reports whether h is a lock table's lock held on success.
func (w *walker) tableAcquire(h Hold) bool {
	if h.Class == "" || !w.e.tableUnlocks()[h.Class] {
		return false
	}
	idx, successNil, ok := successResult(w.fn.Signature)
	return ok && w.heldOnSuccessOnly(h.Path, idx, successNil)
}

// tableUnlocks returns the classes some function of the package unlocks,
// in an element of a container, without locking that class.
func (e *engine) tableUnlocks() map[string]bool {
	if e.tableUnlockClasses != nil {
		return e.tableUnlockClasses
	}
	out := map[string]bool{}
	for _, fn := range e.p.Funcs {
		locked, unlocked := map[string]bool{}, map[string]bool{}
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				c, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				op, lv := lockop.Classify(c.Common())
				class := ""
				if v := lockop.ClassOf(lv); v != nil {
					class = lockop.ClassKey(v)
				} else if elem := lockop.ElementOf(lv); elem != nil {
					class = lockop.ElemKey(elem) // the element is the lock (map[string]*sync.Mutex)
				} else {
					continue
				}
				switch op {
				case lockop.Lock, lockop.RLock, lockop.TryLock, lockop.TryRLock:
					locked[class] = true
				case lockop.Unlock, lockop.RUnlock:
					if lockop.Keyed(lv) {
						unlocked[class] = true
					}
				}
			}
		}
		for class := range unlocked {
			if !locked[class] {
				out[class] = true
			}
		}
	}
	e.tableUnlockClasses = out
	return out
}
