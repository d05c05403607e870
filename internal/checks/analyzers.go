package checks

// All is every check, directive problems included.
var All = concat(confinedChecks, lockorderChecks, revokepathChecks, directiveChecks, suggestChecks)

func concat(lists ...[]Check) []Check {
	var out []Check
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var confinedChecks = []Check{
	{
		Category: "foreign-access", Analyzer: "confined", Level: Error,
		Title: "Role-confined state touched from another goroutine",
		Text:  "A read or write of a field, package variable or value owned by ROLE, or a call of a //confined:control ROLE function, from code that can run on a different goroutine root (another role, a go statement, a callback or an asynchronous API). The finding carries the chain of calls from the root.",
		Fix:   "Hand the work to ROLE's goroutine through its mailbox channel (values received from a channel are owned by the receiver), or move the state out of ROLE's ownership and guard it with a lock.",
	},
	{
		Category: "owned-handoff", Analyzer: "confined", Level: Error,
		Title: "Reference to role-confined state handed to another goroutine",
		Text:  "A pointer, map or slice read out of ROLE state still points at ROLE's data (the contract's rule 6). Passing one to a go statement, or registering a method value bound to one with an asynchronous API (time.AfterFunc, a //confined:spawns parameter), lets the new goroutine touch it while ROLE does: reported at the hand-off when the receiving function reads or writes it, with the chain to that access. Copies are free: maps.Clone, slices.Clone, values and structs of values.",
		Fix:   "Hand the goroutine a copy (maps.Clone, slices.Clone, a struct of values), or send the reference on a channel and stop touching it (the receiver owns it).",
	},
	{
		Category: "use-after-send", Analyzer: "confined", Level: Error,
		Title: "Reference to role-confined state touched after sending it",
		Text:  "Sending a reference read out of ROLE state on a channel hands what it points to to the receiver (the mailbox rule): the sender touching it afterwards, through the same value or a function it passes it to, races with the receiver. Reported at the first such touch after the send, with the send as related information.",
		Fix:   "Finish with the value before sending it, or send a copy and keep the original.",
	},
	{
		Category: "any-touches-state", Analyzer: "confined", Level: Error,
		Title: "//confined:any function touches role-confined state",
		Text:  "A function declared //confined:any may be called from any goroutine, so its body must not read or write state confined to a role (except through channels).",
		Fix:   "Ask the owning goroutine through its mailbox, keep a copy under a lock or in an atomic, or declare the function //confined:control ROLE.",
	},
	{
		Category: "undeclared-role", Analyzer: "confined", Level: Warning,
		Title: "Exported or escaping function touches ROLE state without declaring its role",
		Text:  "Roles of unexported functions are inferred from their callers. Exported functions and functions whose address escapes have callers confinelint cannot see, so when their body touches ROLE state they must declare //confined:control ROLE. Reported at the func line with a suggested fix.",
		Fix:   "Add //confined:control ROLE (the suggested fix does) and an owner.Assert() at the top, or make the function unexported so its role can be inferred.",
	},
	{
		Category: "missing-bind", Analyzer: "confined", Level: Warning,
		Title: "Entry function does not bind its runtime owner",
		Text:  "Declare and assert together: every //confined:entry function binds the confine.Owner of its role, so that runtime assertions know which goroutine owns the state.",
		Fix:   "Call owner.Bind() at the top of the entry function.",
	},
	{
		Category: "missing-assert", Analyzer: "confined", Level: Warning,
		Title: "Exported or escaping ROLE function does not assert its owner",
		Text:  "An exported or escaping //confined:control function can be called from code confinelint does not see, so the static check is backed by a runtime one: it must call owner.Assert(). Without the confine build tag (or -race) the call compiles to nothing.",
		Fix:   "Call owner.Assert() at the top of the function.",
	},
	{
		Category: "unused-ignore", Analyzer: "confined", Level: Warning,
		Title: "//confined:ignore that silences no finding",
		Text:  "An ignore that no analyzer used hides nothing today but would hide a future, unrelated finding on that line. It is reported so that stale suppressions are removed.",
		Fix:   "Delete the ignore comment.",
	},
}

var lockorderChecks = []Check{
	{
		Category: "lock-order", Analyzer: "lockorder", Level: Error,
		Title: "Lock-order inversion",
		Text:  "A cycle in the acquired-while-holding graph of lock classes (the field or package variable declaring each lock, refined by the field an object was reached through), within a function, across functions or across packages: two goroutines taking the locks in opposite orders can deadlock. Locks of objects the function created and has not yet published order nothing. Cycles that share an edge are reported once, at the acquisition that closes the most of them, with the others as related information; a cycle of three or more locks is reported only when every edge is a certain take. Where the cycle meets at an RWMutex read-locked on both sides (one goroutine holds it for reading, the other asks to read it), the readers block each other only behind a waiting writer: the message says so and names a function that write-locks it; when the lock is an unexported field of the package and nothing in the package write-locks it, no writer can ever wait and the cycle is not reported. The related information walks each witness: where its function holds the first lock, where it takes the second (or calls what takes it) and, when that is a call, the Lock inside the callee. An ignore at any witness of the cycle silences it.",
		Fix:   "Pick one order for the two lock classes, take them in that order everywhere, and record it with //confined:before so a regression is reported at the offending Lock.",
	},
	{
		Category: "lock-order-test", Analyzer: "lockorder", Level: Warning,
		Title: "Lock-order inversion that needs test code",
		Text:  "A lock-order cycle one of whose edges is witnessed only in a _test.go file: production code alone cannot deadlock this way, but the test can (a test that freezes a structure by taking its locks in another order, or code of the _test.go files taking them in opposite orders). It is reported only when the two orders can run at the same time under one test: one on the test function's goroutine and the other on a goroutine its test code starts (a go statement, errgroup.Go, WaitGroup.Go), or each on a goroutine it starts; orders that only follow each other on one goroutine (the staged interleavings tests are written for) are not. Reported at the test's acquisition, or where the cycle closes when the edges are code of the _test.go files other than a test function.",
		Fix:   "Take the locks in the test (or the code it tests) in one order everywhere.",
	},
	{
		Category: "before-order", Analyzer: "lockorder", Level: Error,
		Title: "Lock taken against its declared order",
		Text:  "A lock annotated //confined:before OTHER is acquired while OTHER is held: the declared order is broken at this Lock, even if no opposite path exists yet.",
		Fix:   "Take the locks in the declared order (release OTHER first, or take this lock earlier).",
	},
	{
		Category: "double-lock", Analyzer: "lockorder", Level: Error,
		Title: "Lock taken twice on one path",
		Text:  "A lock of the same class acquired while already held deadlocks (sync.Mutex is not reentrant). RLock while holding RLock of the same RWMutex is reported too: it deadlocks as soon as a writer waits between the two. Through calls, the callee must take the lock on every path to its return; or, when the function that takes it does so on every path and the calls down to it are static, the finding says it happens on the paths that call that function (a branch that calls an always-locking method under the lock deadlocks whenever it runs). A function handed a callback that calls it where a call it made fails (`if err != nil { cb(err) }`, nothing else deciding) re-locks on the path where that call fails. A function that locks only on some of its own paths, one reached through an interface or a func value, or a call after the holder stored a constant into the object's state (a flag cleared) is not reported.",
		Fix:   "Split the function into a locking wrapper and a *Locked variant annotated //confined:requires MU, and call the variant while holding the lock.",
	},
	{
		Category: "lock-upgrade", Analyzer: "lockorder", Level: Error,
		Title: "Lock of an RWMutex while read-locked",
		Text:  "sync.RWMutex cannot upgrade a read lock: Lock waits for all readers, including the caller, forever.",
		Fix:   "Release the read lock, take the write lock and re-check the condition, or take the write lock from the start.",
	},
	{
		Category: "unlock-not-held", Analyzer: "lockorder", Level: Error,
		Title: "Unlock of a lock not held",
		Text:  "Unlock (or RUnlock) on a path where the lock is not held: a runtime fatal error, or the release of somebody else's hold.",
		Fix:   "Release only what the path acquired; prefer defer right after the Lock.",
	},
	{
		Category: "lock-leak", Analyzer: "lockorder", Level: Error,
		Title: "Return (or next loop iteration) with a lock held",
		Text:  "A return path leaves a lock held that other paths release and that the function does not declare with //confined:acquires, or a loop iteration can end with the lock held so the next Lock deadlocks, or a function returning a handle whose methods alone release the lock fails without a handle while holding it. A lock taken and released under the same condition (`if cached { c.Lock() } ... if cached { c.Unlock() }`) leaks at a return between the two where the condition holds. A return between a lock and the unlock the function defers after it counts as such a path (`mu.Lock(); if err != nil { return err }; defer mu.Unlock()`).",
		Fix:   "Unlock on every path (defer), or declare //confined:acquires MU if returning with the lock held is the function's contract; unlock before a failure return that gives no handle.",
	},
	{
		Category: "inconsistent-return", Analyzer: "lockorder", Level: Error,
		Title: "Different locks held on different return paths",
		Text:  "A lock held when the function returns on some paths and not on others (or on some of the paths into one return), as gVisor checklocks reports it: callers cannot know whether to unlock. Reported once, at the function. Not counted: TryLock, a conditional lock with a conditional unlock of the same lock, a second lock taken only when its object is not the first one's (`if a != b { b.mu.Lock() }`), a deferred unlock, a lock of a value returned to the caller or created in the function, locks with a declared effect (checked as acquires/releases), locks already reported as lock-leak, and, in a goroutine, a lock that the function starting it or one of its closures unlocks (handed over).",
		Fix:   "Make every return path leave the same locks held: unlock on every path (defer), or take the lock on every path.",
	},
	{
		Category: "blocking-held", Analyzer: "lockorder", Level: Error,
		Title: "Lock held across a blocking operation the other side needs",
		Text:  "A channel send or receive, WaitGroup.Wait, Cond.Wait or a net.Listener's Accept while holding a lock that the goroutine on the other side of the operation (the sender, the one calling Done, Signal, Broadcast or the listener's Close) also takes: neither can proceed. That goroutine takes what the functions it was handed take (a timer's callback, a group's function, a job read from its queue) when it runs them before it gets to the operation. The operation may be inside a called function (a queue's Pop waiting on its Cond), or inside one of the implementations an interface call may run; Cond.Wait releases its own lock only. Operations on a buffered channel are not reported (a constant capacity above zero, one computed from len or cap, or a package variable), nor those of a function that checks the channel's len or cap; a capacity read from configuration or a parameter may be 0 or a full semaphore's bound, so those count. A read lock counts when the other side write-locks it, or read-locks it while some function write-locks it (a waiting writer makes every later RLock wait). Locks the other side never takes are not reported, nor operations some goroutine can unblock without the lock.",
		Fix:   "Release the lock before blocking; copy what the operation needs out of the guarded state first.",
	},
	{
		Category: "guardedby-missing", Analyzer: "lockorder", Level: Warning,
		Title: "Field of an annotated struct always accessed under an undeclared lock",
		Text:  "In a struct that annotates some of its fields (guardedby, atomic or checklocks properties), a field written at least once outside construction and accessed with a sibling lock of the same object held at 90% of its accesses or more, but not declared guarded by it: probably a guard nobody wrote down, so the accesses without it go unchecked (gVisor checklocks' \"may require checklocks annotation\"). Unannotated structs are left to the suggest analyzer.",
		Fix:   "Declare //confined:guardedby MU (or +checklocks:MU) on the field, or +checklocksignore if it needs no lock.",
	},
	{
		Category: "guardedby", Analyzer: "lockorder", Level: Error,
		Title: "Guarded field accessed without its lock",
		Text:  "A //confined:guardedby MU (or +checklocks:MU) field or variable read or written without MU held on every path to the access (with several guards, each missing one is reported). Initialisation in a composite literal or on an unpublished allocation is construction and is not reported.",
		Fix:   "Take the lock around the access, or annotate the function //confined:requires MU and take the lock in its callers.",
	},
	{
		Category: "guardedby-write-shared", Analyzer: "lockorder", Level: Error,
		Title: "Guarded field written under a read lock",
		Text:  "A write to a field guarded by a sync.RWMutex while only RLock is held: other readers run concurrently, so the write races with them.",
		Fix:   "Take the write lock for writes (or make the field atomic if it is a counter read under RLock).",
	},
	{
		Category: "requires", Analyzer: "lockorder", Level: Error,
		Title: "Call without the lock the callee requires",
		Text:  "A call of a function annotated //confined:requires MU (or +checklocks:MU) on a path where MU is not held exclusively, or of a requires_shared function where MU is not held at all.",
		Fix:   "Hold the lock around the call, or propagate the requirement with //confined:requires on the caller.",
	},
	{
		Category: "excludes", Analyzer: "lockorder", Level: Error,
		Title: "Call while holding a lock the callee excludes",
		Text:  "A call of a function annotated //confined:excludes MU while MU is held (excludes_write: held exclusively): the callee takes MU itself and would self-deadlock.",
		Fix:   "Release the lock before the call, or call the variant that expects the lock held.",
	},
	{
		Category: "acquires", Analyzer: "lockorder", Level: Error,
		Title: "Function's declared lock effect differs from what it does",
		Text:  "A function annotated //confined:acquires MU (or acquires_shared) has a return path on which MU is not held: its callers would unlock a lock they do not hold. Or a function leaves held, on every return, a lock that annotations name (a guard, or a function's requirement) without declaring it (gVisor checklocks' \"return with unexpected locks held\"); held on some returns only, each explicit return that keeps it is reported too, beside the function's inconsistent-return finding; a lock no annotation names is a lock helper whose effect is inferred instead, and a Locker type's Lock method needs no declaration.",
		Fix:   "Acquire the lock on every return path, or drop the annotation and let callers lock; declare //confined:acquires MU on a helper that returns with MU held, or release it.",
	},
	{
		Category: "releases", Analyzer: "lockorder", Level: Error,
		Title: "Function declared to release a lock returns with it held",
		Text:  "A function annotated //confined:releases MU has a return path on which MU is still held.",
		Fix:   "Release the lock on every return path.",
	},
	{
		Category: "atomic", Analyzer: "lockorder", Level: Error,
		Title: "Non-atomic access to an atomic field",
		Text:  "A //confined:atomic (or +checkatomic) field read or written without sync/atomic. With guardedby as well, reads must be atomic or locked and writes atomic and locked.",
		Fix:   "Use sync/atomic functions, or better an atomic.Int64 typed field.",
	},
}

var revokepathChecks = []Check{
	{
		Category: "commit-without-drain", Analyzer: "revokepath", Level: Error,
		Title: "Commit reachable without draining the mailbox",
		Text:  "On some path from a root to a //confined:commit ROLE, no //confined:drain ROLE runs after the last acquisition of the locks the commit requires: progress (offsets, acks) is published for work whose results are still waiting in the mailbox. A len(mailbox) == 0 check is not a drain. Reported with the path.",
		Fix:   "Call the ROLE's drain function on that path, after the last lock acquisition and before the commit.",
	},
	{
		Category: "inline-commit", Analyzer: "revokepath", Level: Error,
		Title: "Commit run inline on a foreign goroutine",
		Text:  "A //confined:commit ROLE reached from a foreign root (a rebalance callback such as kgo.OnPartitionsRevoked, another role). Draining from that goroutine is itself a confined violation; the commit must run on ROLE's goroutine.",
		Fix:   "Post the commit request to ROLE's mailbox and wait for it, bounded by a timeout.",
	},
	{
		Category: "drain-without-receive", Analyzer: "revokepath", Level: Error,
		Title: "Drain that never receives from a channel",
		Text:  "A //confined:drain function that receives from no channel, neither itself nor through the functions it calls (calling another declared drain counts): it cannot apply the completed work waiting in the mailbox, so every commit it guards could publish progress for undrained work. A drain is checked, not trusted. Reported at the func line.",
		Fix:   "Receive the mailbox's completions in the drain (a select with a default case empties it without blocking), or move the directive to the function that does.",
	},
}
