// Package confine is the runtime half of confinelint: an assertion that
// state confined to one goroutine is touched only from that goroutine, and a
// lockdep-style validator of lock order. Both cost nothing unless switched
// on.
//
// confinelint proves ownership statically wherever it sees every caller. An
// exported method can be called from code it never sees, so there the
// annotation is paired with a run-time check ("declare and assert
// together").
//
// # Declare and assert
//
// An [Owner] sits next to the state it guards, annotated with the same role:
//
//	type Consumer struct {
//		owner   confine.Owner    //confined:control
//		offsets map[string]int64 //confined:control
//		inbox   chan func()
//	}
//
// The entry goroutine binds it first thing and releases it on the way out,
// so the loop can be restarted on a new goroutine. Release must run before
// anything that tells other goroutines the loop is over, hence the order of
// the defers:
//
//	//confined:entry
//	func (c *Consumer) run(done chan<- struct{}) {
//		defer close(done) // runs last
//		c.owner.Bind()
//		defer c.owner.Release()
//		for f := range c.inbox {
//			f()
//		}
//	}
//
// Every exported or escaping confined function asserts:
//
//	//confined:control
//	func (c *Consumer) Commit(topic string, offset int64) {
//		c.owner.Assert()
//		c.offsets[topic] = offset
//	}
//
// The rules, in the enabled build:
//
//   - Bind binds the Owner to the calling goroutine. Binding again on the
//     same goroutine does nothing. Binding while another goroutine that is
//     still running holds the Owner is a [DoubleBind] violation, and the
//     Owner stays with the first goroutine. If that goroutine has exited
//     without Release, Bind takes over; finding out takes a dump of all
//     goroutines, which is why Release is the intended way.
//   - Release unbinds. Only the bound goroutine may release
//     ([WrongGoroutine] otherwise); releasing an unbound Owner does nothing.
//   - Assert on the bound goroutine passes; on any other goroutine it is a
//     [WrongGoroutine] violation naming both goroutine ids, the function
//     that asserted, and the function and line that bound the Owner (who
//     owns the state).
//   - Assert on an unbound Owner passes. Before Bind the state is still
//     being constructed by whoever allocated it (the static rules call that
//     construction too), and after Release the loop is over and shutdown
//     code owns it; failing there would make every constructor and Close
//     method a violation.
//
// # Lending the owner to a serialized callback
//
// Some libraries call back on a goroutine of their own but never while the
// owning goroutine runs: franz-go with kgo.BlockRebalanceOnPoll calls its
// rebalance callbacks only between AllowRebalance and the return of the
// next PollFetches, while the poll loop is parked. Such a callback is
// declared //confined:serialized ROLE, is checked statically as ROLE's code,
// and asserts the Owner like any other ROLE function. The loop lends the
// Owner for the window in which the callback may run:
//
//	//confined:entry
//	func (c *Consumer) run(ctx context.Context) {
//		c.owner.Bind()
//		defer c.owner.Release() // also ends a loan
//		c.owner.Lend()          // callbacks may run until PollFetches returns
//		for ctx.Err() == nil {
//			fetches := c.cl.PollFetches(ctx) // rebalances are blocked from here
//			c.owner.Reclaim()
//			c.process(fetches)
//			c.owner.Lend()
//			c.cl.AllowRebalance() // callbacks may run until the next PollFetches returns
//		}
//	}
//
//	//confined:serialized control
//	func (c *Consumer) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
//		c.owner.Assert() // passes: the loop lent the owner
//		c.commitRevoked(ctx, revoked)
//	}
//
// Between Lend and Reclaim the first other goroutine to Assert becomes the
// borrower and passes; the owning goroutine itself, or a third goroutine,
// asserting in that window is a [WrongGoroutine] violation, since they may
// run at the same time as the borrower. Lend and Reclaim run on the bound
// goroutine; Reclaim (or Release) ends the loan.
//
// # Switching it on
//
// The checks are compiled in with the confine build tag, and automatically
// under the race detector, since tests run with -race are where they pay
// off:
//
//	go test -tags confine ./...
//	go test -race ./...
//
// [Enabled] tells which build is running. Without either, Owner has no size
// and its methods are empty and inline to nothing; [Mutex] and [RWMutex]
// are their sync counterparts behind inlined forwarding methods.
//
// Under -race, confine hides its own synchronisation (the Owner word, the
// lock-order graph) from the race detector. Otherwise two goroutines that
// met only inside confine would look ordered, and the races the detector is
// there to find would go unreported.
//
// # Violations
//
// A violation panics with a [Violation], which is an error. A program can log
// or count violations instead with [SetViolationHook]; the hook runs on the
// offending goroutine and may panic itself. Neither Assert nor the
// wrong-goroutine path allocates, with or without a hook; only formatting a
// Violation's message does.
//
// # Lock order
//
// [Mutex] and [RWMutex] are drop-in sync.Mutex and sync.RWMutex that, when
// enabled, check the order locks are taken in, keyed on lock classes as in
// the Linux kernel's lockdep: NewMutex("consumer.commitMu") names the class,
// which all mutexes of that name share; a zero value is a class of its own,
// named after the call site of its first Lock (numbered "#2", "#3" when
// other zero values were first locked there too, as by one helper that
// locks every mutex).
// Acquiring class B while holding class A records the edge A -> B once, with
// the stack. Acquiring in an order that closes a cycle (B -> A directly, or
// through other classes) is a [LockOrderInversion], reported the first time
// it is seen and before blocking, with the stack of every edge in the cycle:
// the deadlock is found even when this run's timing did not hit it. Locking
// a mutex the goroutine already holds, including a second RLock, is a
// [RecursiveLock]. Read and write locks order alike (a reader can queue
// behind a writer). TryLock never blocks, so it is not checked, but the lock
// counts as held afterwards. Nesting two locks of the same class is not
// checked. A lock may be unlocked by another goroutine, as with sync.Mutex.
//
// The bookkeeping sits behind one global mutex: a checked Lock and Unlock
// pair costs tens of nanoseconds instead of a few, and contended programs
// serialise on it. It is a debugging aid, not something to ship enabled.
//
// # Cost
//
// go test -run '^$' -bench . -benchmem ./confine/, with and without
// -tags confine, on a 2-core AMD EPYC with Go 1.26 (per operation):
//
//	                                 default build   -tags confine
//	empty loop                       0.3 ns          0.3 ns
//	Assert, on the bound goroutine   0.3 ns          4 ns
//	Assert, unbound                  0.3 ns          2 ns
//	Assert, wrong goroutine (*)      0.3 ns          200 ns
//	Bind + Release (**)              0.3 ns          80 ns
//	Mutex Lock + Unlock              4.3 ns          41 ns
//	sync.Mutex Lock + Unlock         4.3 ns          4.3 ns
//
// (*) with a hook that only counts; the time goes to runtime.Callers,
// finding the function to name in the message. (**) Bind records its
// caller with runtime.Callers, for messages; it runs once per goroutine.
// None of these allocate.
// Under -race everything is slower: Assert costs about what a sync.Mutex
// Lock and Unlock cost there.
//
// # Identifying goroutines
//
// Asserting needs the calling goroutine's identity in a few nanoseconds. The
// supported way, parsing the "goroutine N" header from runtime.Stack, costs
// about a microsecond. Instead a four-instruction assembly stub returns the
// runtime's g pointer (from thread-local storage on amd64, from R28 on
// arm64), and the goroutine id is read from g at a fixed offset.
//
// The id, not the g pointer, is what identifies the owner: the runtime
// reuses g structs for new goroutines, while ids are never reused, so a
// stale binding can never match a newer goroutine.
//
// The offset is calibrated when the package initialises: the layout known
// for Go 1.23 to 1.26 is checked against runtime.Stack on two goroutines,
// and if a future release has moved the field the first 256 bytes of g are
// searched for it. If nothing matches, and on other architectures, ids come
// from runtime.Stack: slower, never wrong. This was preferred over
// github.com/petermattis/goid, which needs the same stub, trusts a layout
// keyed on the Go release without checking it, and would be the package's
// only dependency.
package confine
