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
	// lent is 0, lentOpen between Lend and the first borrower's Assert,
	// then the borrower's id until Reclaim.
	lent atomic.Uint64
	// boundAt is a return address into the function that called Bind, so
	// that a violation can say who owns the state.
	boundAt atomic.Uintptr
}

// lentOpen marks an Owner lent to a borrower not yet known. No goroutine
// has this id.
const lentOpen = ^uint64(0)

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
				o.setBoundAt(callerPC(1))
				return
			}
		case stillRunning(bound):
			report(Violation{Kind: DoubleBind, Op: "Bind", Goroutine: me, Owner: bound, PC: callerPC(1), BoundAt: o.getBoundAt()})
			return
		default:
			if o.swap(bound, me) {
				o.setBoundAt(callerPC(1))
				return
			}
		}
	}
}

// Release unbinds o, so that a later Bind, on any goroutine, starts afresh.
// It must run on the bound goroutine; elsewhere it reports WrongGoroutine
// and leaves o bound. Releasing an unbound Owner does nothing; releasing a
// lent one ends the loan too.
func (o *Owner) Release() {
	bound := o.load()
	if bound == 0 {
		return
	}
	if me := currentGoroutineID(); bound != me || !o.swap(me, 0) {
		o.reportWrongGoroutine("Release", bound, me)
		return
	}
	o.setLent(0)
}

// Assert reports a WrongGoroutine violation, naming both goroutines and
// where the owner was bound, unless the calling goroutine is the one o is
// bound to, or the one o is lent to. An unbound Owner passes: before the
// entry goroutine binds it (construction) or after it releases it
// (shutdown) there is no owner to protect the state from.
func (o *Owner) Assert() {
	if bound := o.load(); bound != 0 {
		me := currentGoroutineID()
		if lent := o.getLent(); lent != 0 {
			o.assertLent(bound, lent, me)
		} else if bound != me {
			o.reportWrongGoroutine("Assert", bound, me)
		}
	}
}

// Lend lends o, until Reclaim, to the goroutine that next asserts it: a
// library callback that runs on a goroutine of its own but never
// concurrently with o's goroutine, such as a franz-go rebalance callback
// under kgo.BlockRebalanceOnPoll (the static side is //confined:serialized
// ROLE). Call it on the bound goroutine just before the window in which the
// callback may run (before AllowRebalance); while lent, an Assert by the
// bound goroutine itself is a violation, since the borrower may be running.
// Lending an unbound Owner does nothing.
func (o *Owner) Lend() {
	if bound := o.load(); bound != 0 {
		if me := currentGoroutineID(); bound != me {
			o.reportWrongGoroutine("Lend", bound, me)
			return
		}
		o.setLent(lentOpen)
	}
}

// Reclaim ends a loan started by Lend: from here only the bound goroutine
// passes Assert again. It must run on the bound goroutine.
func (o *Owner) Reclaim() {
	if bound := o.load(); bound != 0 {
		if me := currentGoroutineID(); bound != me {
			o.reportWrongGoroutine("Reclaim", bound, me)
			return
		}
		o.setLent(0)
	}
}

// assertLent is Assert while o is lent: the first goroutine other than the
// owner to assert becomes the borrower; the owner and any third goroutine
// fail.
//
//go:noinline
func (o *Owner) assertLent(bound, lent, me uint64) {
	if me != bound && (lent == me || lent == lentOpen && o.claimLoan(me)) {
		return
	}
	v := Violation{Kind: WrongGoroutine, Op: "Assert", Goroutine: me, Owner: bound, PC: callerPC(2), BoundAt: o.getBoundAt(), Lent: true}
	if lent := o.getLent(); lent != lentOpen {
		v.Borrower = lent
	}
	report(v)
}

// reportWrongGoroutine is the rare path; keeping it out of line keeps
// Assert's own frame small.
//
//go:noinline
func (o *Owner) reportWrongGoroutine(op string, bound, me uint64) {
	report(Violation{Kind: WrongGoroutine, Op: op, Goroutine: me, Owner: bound, PC: callerPC(2), BoundAt: o.getBoundAt()})
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

func (o *Owner) getLent() uint64 {
	hideSyncBegin()
	lent := o.lent.Load()
	hideSyncEnd()
	return lent
}

func (o *Owner) setLent(v uint64) {
	hideSyncBegin()
	o.lent.Store(v)
	hideSyncEnd()
}

func (o *Owner) claimLoan(me uint64) bool {
	hideSyncBegin()
	claimed := o.lent.CompareAndSwap(lentOpen, me)
	hideSyncEnd()
	return claimed
}

func (o *Owner) getBoundAt() uintptr {
	hideSyncBegin()
	pc := o.boundAt.Load()
	hideSyncEnd()
	return pc
}

func (o *Owner) setBoundAt(pc uintptr) {
	hideSyncBegin()
	o.boundAt.Store(pc)
	hideSyncEnd()
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
