//go:build confine || race

package confine

import (
	"runtime"
	"sync/atomic"
)

// Enabled reports whether this build checks ownership and lock order: true
// with the confine build tag or the race detector.
const Enabled = true

// An Owner records which goroutine owns some state. The zero value is
// unbound. See the package documentation for the pattern.
//
// An Owner must not be copied after first use.
type Owner struct {
	_ noCopy
	// bound is the id of the owning goroutine, 0 when unbound. Goroutine
	// ids are never reused, so a stale id can never match a new goroutine.
	bound atomic.Uint64
}

// Bind binds o to the calling goroutine. Call it at the top of the entry
// goroutine, followed by defer o.Release(). Binding again on the same
// goroutine does nothing.
//
// If o is bound to another goroutine that is still running, Bind reports a
// DoubleBind violation and leaves o bound to that goroutine. If that
// goroutine has exited without calling Release, Bind takes o over; finding
// out costs a dump of all goroutines, which Release avoids.
func (o *Owner) Bind() {
	me := currentGoroutineID()
	for {
		bound := o.load()
		switch {
		case bound == me:
			return
		case bound == 0:
			if o.swap(0, me) {
				return
			}
		case stillRunning(bound):
			report(Violation{Kind: DoubleBind, Op: "Bind", Goroutine: me, Owner: bound, PC: callerPC(1)})
			return
		default:
			if o.swap(bound, me) {
				return
			}
		}
	}
}

// Release unbinds o, so that a later Bind, on any goroutine, starts afresh.
// It must run on the bound goroutine; elsewhere it reports WrongGoroutine
// and leaves o bound. Releasing an unbound Owner does nothing.
func (o *Owner) Release() {
	bound := o.load()
	if bound == 0 {
		return
	}
	if me := currentGoroutineID(); bound != me || !o.swap(me, 0) {
		o.reportWrongGoroutine("Release", bound, me)
	}
}

// Assert reports a WrongGoroutine violation, naming both goroutines, unless
// the calling goroutine is the one o is bound to. An unbound Owner passes:
// before the entry goroutine binds it (construction) or after it releases it
// (shutdown) there is no owner to protect the state from.
func (o *Owner) Assert() {
	if bound := o.load(); bound != 0 {
		if me := currentGoroutineID(); bound != me {
			o.reportWrongGoroutine("Assert", bound, me)
		}
	}
}

// reportWrongGoroutine is the rare path; keeping it out of line keeps
// Assert's own frame small.
//
//go:noinline
func (o *Owner) reportWrongGoroutine(op string, bound, me uint64) {
	report(Violation{Kind: WrongGoroutine, Op: op, Goroutine: me, Owner: bound, PC: callerPC(2)})
}

func (o *Owner) load() uint64 {
	hideSyncBegin()
	bound := o.bound.Load()
	hideSyncEnd()
	return bound
}

func (o *Owner) swap(old, new uint64) bool {
	hideSyncBegin()
	swapped := o.bound.CompareAndSwap(old, new)
	hideSyncEnd()
	return swapped
}

// stillRunning reports whether goroutine id exists. A goroutine that has
// just released its last resources may still be on its way out, so a
// positive answer is checked again after yielding.
func stillRunning(id uint64) bool {
	for range 3 {
		if !goroutineAlive(id) {
			return false
		}
		runtime.Gosched()
	}
	return true
}
