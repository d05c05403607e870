// Package locks is the summary engine behind the lockorder analyzer: lock
// state along SSA paths, per-function lock effects, and acquired-while-
// holding edges.
//
// # Design
//
// State (state.go) is a sorted set of holds keyed by symbolic lock path
// (path.go), each with its class (the declaring field or var, lockdep
// style), shared or exclusive, and where it was taken; plus the pending
// defers and the paths definitely released. It is a value with
// copy-on-write slices, so forking at a branch is free.
//
// Each function is walked forward over its CFG to a fixpoint (walk.go),
// then once more over the fixpoint's in-states to build its summary and,
// in the checking phase, findings. Summaries are computed callees first,
// per strongly connected component of the package's call graph; a
// recursive component is walked twice, a callee not yet summarised
// counting as empty. Checks then run top-down in source order so that a
// closure called in place (or a range-over-func body) is checked under the
// state its parent creates it in.
//
// # Decisions where the contract is silent
//
//   - Joins: a lock held on some incoming paths only is "maybe held". Maybe
//     holds produce no double-lock findings or order edges (but a lock
//     taken on a branch whose only release is a deferred unlock stays
//     held to the return where the branch ran: taken again after the
//     merge, it is a double lock; heldtoreturn.go), but one held
//     exactly where a parameter's own value says (`if first { mu.Lock();
//     defer mu.Unlock() }`) orders what is taken after the merge
//     (edges.go, heldWhere). The walk
//     follows branch conditions (cond.go): a maybe-hold is tagged with the
//     condition that told the merged paths apart, and a later branch on
//     the same value (by path: two loads of one flag agree; arithmetic of
//     such values and constants by its operands) makes it
//     definite or drops it, so `if c { mu.Lock() } ... if c { mu.Unlock()
//     }` balances; up to two conditions, for `if x != nil && x != me`,
//     where `x != nil` and `x == me` are remembered as flags of their own
//     (tags.go); on the edge into a loop header what is known of a phi's
//     incoming value (a constant, a value, a tag) moves to the phi, so a
//     loop's own flag decides a hold carried over its back-edge
//     (phimoves.go, phiConds); branches a known value rules out (a constant, a flag
//     tested before, a parameter or a closure's captured variable bound to
//     a constant or a known value at the call: specialize.go) are dead. A lock maybe-held over a loop back-edge and
//     taken again for sure in the loop, directly or by a call, where the
//     function unlocks it somewhere (a deferred unlock of a
//     loop-invariant path included: it runs only at the return) or took
//     it through a helper, is a re-lock on the next iteration
//     [lock-leak]. A callee's take decided
//     by one branch carries that condition up (take.when, when.go): a
//     caller holding the lock only under the same condition re-locks it
//     there, and so does one holding it where the walk knows the
//     condition true [double-lock]; a comparison with a package-level
//     error var counts as known where the caller knows the value not
//     nil, one failure it may be (sentinel.go). Annotations are
//     must-hold, as checklocks: a guarded access or a call requiring a
//     lock needs it on every path, and a
//     maybe-held lock at a return is an inconsistent return state
//     (returns.go lists what does not count; an unannotated lock taken
//     exactly where a parameter says is the caller's choice).
//   - Double lock compares symbolic paths: a.mu then b.mu of two values of
//     one type is not reported (lockdep would report same-class nesting;
//     it is common and usually ordered by the program, e.g. by address).
//     Same-class nesting also adds no order edge, unless the two locks sit in
//     different struct fields held by value (Hold.Sub): a wrapper mutex type
//     (`type Mutex struct{ sync.Mutex }`) declares one field for every
//     struct that holds one, and A.mu and B.mu order each other as two
//     fields would (distinctValueSubs). Linked nodes share their
//     owner: n.parent.tree.mu is n.tree.mu (linkedowner.go); two fields
//     the package copies one into the other on an object are one object
//     (cd.nextLevel = cd.thisLevel; siblingAlias). A Locker the package
//     shows the origin of is that lock (objects.LockerOf): mu.RLocker()
//     is mu's read side, a Cond's L the Locker given to sync.NewCond,
//     also when the Cond or Locker is kept in a field every store into
//     which makes it from a lock of the same object; a struct that
//     embeds a sync mutex and locks through its promoted methods
//     (sync.NewCond(&s.mu), mu a struct{ sync.Mutex; n int }) stands for
//     that mutex, the one s.mu.Lock() takes. Locks behind a Locker of
//     unknown origin are never double-locked.
//     In a program nothing imports (package main, a package of _test.go
//     files) a type made at one site that runs once has one object: a
//     lock of it on any path is the held one (singleton.go).
//   - Per-key locks: a lock kept as an element of a map, slice or array
//     field has its container's class, "KeyLocks.m[]" (lockop.ElementOf).
//     A helper that leaves one key's lock held, or releases it, under a
//     path its caller cannot name has that effect by class (keyed.go):
//     two keys are two locks (no double lock), the order against other
//     classes counts. A lock a callee takes or releases inside its
//     receiver or argument is one key's when that value is an element
//     (a wrapper's Lock method on the wrapper looked up: keyedArg).
//   - Leaks: a lock taken here, definitely held on one return path and
//     definitely released on another, leaks on the first; so does one
//     held for sure on one path and released for sure on another where
//     the two merge before a single return (Hold.leaky; not when the merge
//     is explained by a defer registered on some paths, or an unlock
//     handed to a goroutine). A lock held on every return is the
//     function's effect (a lock helper): inferred like `acquires`, applied
//     at call sites and exported. One that returns the function that unlocks leaves
//     its caller holding the lock until it runs that function, when
//     every use of it runs it (releasefunc.go; not exported). A lock held exactly on the returns
//     reporting success (nil error, or a non-nil handle) and released on
//     the others is acquired on success (tryacquire.go, Clang's
//     TRY_ACQUIRE): callers hold it where their test of the result says
//     success; a lock table's key lock so acquired goes by its class,
//     held per call, as one always acquired does (keyed.go). A lock
//     held, on every return giving a result not nil, inside that result
//     (a lookup that locks the entry it found) is held in the call's
//     value (resultheld.go; not exported).
//     Locks taken by TryLock and locks whose unlock is handed to
//     a closure passed to a call or to a started goroutine are not leaks;
//     a TryLock wrapper called as a statement, its result ignored, is
//     taken for a plain lock (trywrapper.go). The returns of a function
//     that keep one lock are one finding.
//     Panicking paths (the recover block) are not return paths. A panic
//     with a lock this function took still held once the pending defers
//     ran is a lock-leak when something recovers it: a function of the
//     package that defers a recover and calls this one, directly or not
//     (not through go statements), or net/http, for a handler root
//     (panicleak.go). Without one the program dies and nothing waits.
//   - Unlock not held: only when the same path was unlocked before on every
//     path (a double unlock). An unlock of a lock never taken in the
//     function releases the caller's lock and becomes part of its summary.
//   - Closures run in place (called, deferred, range-over-func bodies) are
//     checked under the join of their call sites' states, parameters bound
//     to arguments (summarize.go). Closures passed to a call other than
//     go/defer are assumed to run now (the contract) but may be kept: the
//     caller's locks are lent to them (Hold.Lent), which satisfies guards
//     without creating findings or edges. A literal made here and passed
//     to a callee that calls it (sync.Once.Do) takes what its summary
//     specialized by its captured values takes, as in place
//     (paramcall.go, passedSummary). A deferred literal that only
//     calls the lock method value a captured variable holds (`unlock :=
//     b.RUnlock; defer func() { unlock() }()`, later `unlock = b.Unlock`)
//     lets the lock go whichever the variable holds when it runs, when
//     nothing but stores of such values writes the variable
//     (boundop.go, deferredCellOp). A call of a func variable, by hand
//     or by such a literal when the defers run, calls what the variable
//     holds there when only stores write it (objects.StoredAt: `unlock =
//     func() {}` disarms it; cellvalue.go). A deferred RLock of a lock
//     read-locked since is a double lock needing no writer (RUnlock was
//     meant: nothing releases either).
//   - Calls of func values that are not one known function (a field, a
//     map or slice element, a package var) take the edges of every
//     function of the package that reaches it (up to maxCandidates: more
//     is a dispatch table, which resolves to nothing) (objects.FuncsOf: stored
//     directly, through a setter's parameter, a functional option, a
//     composite literal or append); interface calls those of the
//     package's types implementing the interface. The one function a
//     func-typed field, a package var or a container's elements ever
//     hold is the callee (a method value's receiver unknown: candidateArgs).
//     Otherwise neither changes the
//     lock state, with two exceptions: an interface call on a value
//     converted from a concrete type (var d Doer = c) or with a single
//     candidate runs that method (an exact call), and the locks every
//     candidate takes on every path, acquires or releases at the same
//     path (relative to the call) are the call's effect. Only interfaces
//     the package declares are resolved, and only to types implementing
//     the interface of the called value (an Indexer's List, embedded from
//     Store, runs no type that is only a Store; a type that has the method
//     from an embedded interface field runs that interface's
//     implementations) that the package converts
//     to it (directly, in a package var's initializer, by a `var _ I =
//     (*T)(nil)` assertion, or to an interface whose values it converts or
//     asserts to this one), unless both the interface and the type are
//     exported: crypto/tls's *Conn has the Write of its transcriptHash by
//     accident and is never one. A value read from an unexported interface
//     field runs only the types the package stores into the field, when
//     it knows them all (objects.FieldTypes, storedImplementations). A
//     call on a parameter runs the methods of the types the package
//     passes for it, when it knows them all and each is its own source
//     method, whoever declared the interface (error's Error included;
//     objects.ParamTypes, passedImplementations); so does a call on such
//     a field of another package's interface type (an io.Writer field).
//   - A function that calls a func-typed parameter (or a captured
//     variable) records the call with the locks it holds there (a
//     paramCall); each call site that passes a known function adds that
//     function's takes under those locks and its own (edges; a double
//     lock when the callee calls it on every path and the function takes
//     the lock on every path; for a literal made at the call site, every
//     path of what it calls, its own branches being the caller's code),
//     or, passing its own parameter on, records
//     the call in its summary. Against a lock the callee itself holds at
//     its call of the function, the callee's branch to that call does
//     not make it conditional (a call written on that branch would be a
//     double lock too): only the passed function's take must be certain.
//     Nor does a callee branch that is one failure (`if err != nil` on a
//     call's error result; failpath.go): failures happen whatever the
//     caller knows. Nor the passed function's one nil test of a
//     parameter the call gives a value known not nil (an error
//     callback's `if err == nil { return }`; paramargs.go).
//     Only a callee known exactly: the locks a
//     candidate of an interface call holds around the call are a guess
//     on top of another. sync.Once.Do runs its argument (the first
//     time only, taken as certain: a Do under a lock its function takes
//     deadlocks the first time); sync.Map's Range, the sort and slices
//     functions taking a comparison or predicate, and the filepath and fs
//     walks run theirs as a loop runs its body (runsArgumentAt). Param
//     calls are not exported: a
//     callback passed across packages adds no edges.
//   - fmt, log, log/slog and testing's Log family call the String or
//     Error method of operands formatted with %v, %s, %q, %x, %X (%w for
//     Errorf) or printed by Print and Println, when the operand's static
//     type has one (and no Format method): a call of it, exact for a
//     pointer receiver on the pointer itself, edges only otherwise (a value
//     receiver locks a copy); conditional under log/slog, whose JSON
//     handler does not call String (and a conditional call is edges
//     only, no double lock). A format string that is not a constant
//     calls nothing. A package's own wrapper (`func (p *Page) warnf(format
//     string, args ...any)` passing args on, whole, with its format behind
//     a constant prefix without verbs) formats as what it wraps;
//     conditional when it formats on some paths only. encoding/json's
//     Marshal, MarshalIndent and Encoder.Encode call the MarshalJSON
//     method of the value they are given, the same way (marshal.go);
//     what reflection finds inside it is not followed.
//   - A Lock or Unlock method of a user type (a sync.Locker) whose effect
//     is declared (acquires/releases) or inferred from its body is a call
//     with that effect, not an opaque lock operation on the value: the
//     lock is the field it names, so requires and guards on that field are
//     satisfied. Calls through a sync.Locker interface stay opaque.
//   - May versus must: a take records how many conditional steps lead to
//     it (the acquisition, and each call on the way, whose block does not
//     dominate every return of its function). A double lock through a
//     call is reported only for a callee that takes the lock on every path
//     to its return (0 steps): a callee that may take it does so under
//     conditions on values the analysis does not follow (quic.go's
//     handlePostHandshakeMessage never renegotiates). Unless the function
//     that acquires takes the lock on every path to its return and every
//     call down to it is exact: then the branches are only the callers'
//     choices to call it (a full bucket's split calling the exported
//     NPeersForCpl, which read-locks), and the branch that makes the call
//     deadlocks whenever it runs: a double lock "on the paths that call"
//     that function (calls.go, relockSomePaths), within the conditional
//     bound (a func value's or interface method's own branch counts as
//     such a choice unless it tests what the callee was passed, an
//     event's type: take.dynBranch, argbranch.go; nor a static
//     function's branch on a parameter being nil, `if tx == nil {
//     db.Update(fn) }`, when its caller passes its own parameter or a
//     value known not nil: take.nilPath, nilarg.go), and not when the
//     holder stored a constant into a shared field between its
//     acquisition and the call (it may be ruling that branch out:
//     `r.dirty = false; r.refreshIfDirty()`). An iteration is not such a
//     step for this purpose: a block run on every iteration
//     of a loop that runs on every path counts as unconditional
//     (take.branch, iterations.go): a callee locking the held lock once
//     per listener deadlocks whenever there is a listener, whereas a
//     branch may test the very state that rules the take out. Nor is it
//     for the bound below (a callback list walked under a lock reaches
//     each callback); the certainty of edges and everything else keep
//     counting iterations as conditional steps. A once guard is not
//     such a condition: the early return of a function that tests a flag
//     it sets itself (`if t.closed { return }; t.closed = true`, a
//     compare-and-swap, a state compared with the constant it stores) is
//     what later calls take, and the first call runs the rest
//     (onceguard.go). Nor is a lock taken on every path at different
//     places (`if tag == "" { return m.SeriesIDs() }; m.mu.RLock()`):
//     takes conditional only by the function's own branches, whose blocks
//     together lie on every path to a return, are certain (takesites.go).
//     Nor is a guard clause that fails (`if key == "" { return
//     errEmpty }`, `if err != nil { return err }`): a return that surely
//     gives a non-nil error is not one a take must dominate to be
//     certain, while a success return is left; when none is, the
//     returns after a call's error was found are still left out
//     (failreturn.go). A take whose only branches down from a callee
//     are failures is a double lock on that failure's path
//     (failbranch.go). The re-locks under one
//     hold of the walked function are one finding, the later calls its
//     related positions (relockgroup.go); a call that takes the lock
//     again twice (RLock, later Lock) is one finding, at its first take.
//     So are the operations that block under one hold (blocking.go,
//     findBlockedUnderHold).
//     Order edges through
//     calls use may-takes, but a take more than maxCond branches
//     or maxVia calls away propagates no further (debug and trace paths,
//     chains no reader can check: go/types' Checker.trace). A certain
//     take (no conditional step, every call exact: not an interface or
//     func-field candidate) is no guess at any depth and goes up to
//     maxMustVia calls; so does one whose leaf locks on every path, for
//     the double lock only (take.deep: no edge). Among equal
//     takes the most certain, then the shortest, witness is kept. A lock
//     taken on both branches of an if counts as conditional (dominance,
//     not a must-dataflow): accepted.
//   - Lock classes are refined by how the lock's struct was reached
//     (Hold.Sub, objects.Index.Via): the value struct field holding it
//     (c.in.Mutex and c.out.Mutex are both halfConn.Mutex but never the
//     same lock), or the alias group of the pointer field it was loaded
//     from (a Store as Node.wal and as Table.data, when the package never
//     puts one field's object into the other). A cycle closes only where
//     consecutive edges meet on refinements that can be equal (unknown
//     matches any), so c.in -> hs and hs -> c.out is no inversion;
//     messages keep naming the class. Locks in anonymous struct fields are
//     classes of their own, named by the field (Store.coalescedMu); a
//     local variable is a class of its own, reached from the closures
//     that share it (localclass.go), unless it is declared in a loop.
//   - Which object: paths, freshness and publication come from package
//     objects. A lock of an object this function created and has not yet
//     published (objects.Index.Private: no publication of that allocation
//     can have run since it executed; the publishing instruction itself
//     counts as published; one on the other side of a branch on the same
//     condition value does not) orders nothing: no other goroutine can
//     hold it. A field whose objects point back to their holder
//     (objects.Index.BackPointers) is an inferred alias: c.tr.owner.mu is
//     c.mu, in callees' effects too (walker.calleePath). A hold moves
//     with the phi that carries its object into a block (phimoves.go:
//     hand-over-hand coupling). A callee that releases the caller's lock and takes it again
//     retakes it under the caller's other locks: edges.
//   - Edges are exported as the package's own; the facts of every
//     transitive dependency are visible to the analysis (AllPackageFacts),
//     so a cycle across packages is found where it closes. One witness
//     per edge, chosen by rule (production before test, certain before
//     possible, earliest position), not by walk order. Cycles are grouped
//     by shared edges and reported at the edge closing the most of them
//     (cycles.go); ties go to the latest acquisition. A cycle of three or
//     more locks needs every edge certain; a cycle that needs an edge seen
//     only in a _test.go file is [lock-order-test], reported when its
//     edges can run at the same time under a test (teststart.go: the
//     test's goroutine and those its test code starts), or when one
//     goroutine runs it nested, an edge's call reaching the others in
//     place (nestedcycle.go; test files' code only, no test's own hold).
//     A cycle through an
//     edge that breaks a declared `before` order is reported as
//     [before-order] only. An ignore at any local witness of a cycle
//     silences it.
//   - Interface calls under a lock run code the declaring package cannot
//     see when the implementation lives in an importer (dispatch.go): the
//     calls of the package's own interfaces made with locks definitely
//     held, directly or up to three static calls down, are exported on
//     the interface (facts.LockDispatches); a package that converts a
//     named type of another package than the interface's to it (a
//     declaration `var _ I = (*T)(nil)` alone does not count) adds the edges from each held lock to what the type's
//     method takes, unless a dependency already has that edge. Edges
//     only, by class; the same class on both ends is a double lock only
//     when the method takes it on every path through the argument that
//     leads to the held lock (Dispatch.Path: a hook logging through the
//     entry's logger).
//   - Two locks of one class order nothing, except along a tree
//     (tree.go): holding a node's lock while taking the lock of the
//     object in one of its fields (`q.parent`, `q.parent.parent`), and,
//     elsewhere, holding a node's lock while taking the lock of an object
//     read from one of its containers (`for _, c := range q.children`),
//     is reported as an inversion along the tree when each of the two
//     locks is exclusive on one side at least. Package-local. And two
//     locks of one class a function takes itself, reached the same way
//     from two parameters of one type that it does not compare with an
//     ordering operator, are an order by argument (symmetric.go):
//     swapped arguments at once deadlock. A loop over a map that locks
//     each value and keeps it past the iteration takes them in map order,
//     which changes between ranges: an order by map iteration
//     (maporder.go); a loop over a slice of keys made per call and not
//     sorted, holding each key's lock, takes them in the data's order: an
//     order by slice order (sliceorder.go). A cycle of two edges that one
//     function's nesting witnesses alone (A, then B, then another object's A) is two
//     objects of A's class and is not reported (cycles.go,
//     nestedInstances).
//   - Facts leave out private leaf classes (facts.go, privateLeaves): a
//     lock declared by an unexported var or field of the package, never
//     left held or released for a caller, with no edge out of it. No
//     importer can hold one or close a cycle through it, so its takes
//     would only travel: sync.Pool's allPoolsMu and sync.Once's m were a
//     third of all takes in the facts of etcd's packages.
//   - Guards: every guard of a field must be held; locks of local values
//     are per instance (no class fallback), index expressions are part of
//     the path. A write is a store, ++, map insert/delete, append assigned
//     back, or the address taken for anything but a sync/atomic call;
//     accesses through a value allocated in the same function are
//     construction (publication is not tracked).
//   - Blocking (blocking.go): see the comment there; timers, contexts and
//     time.Sleep have no peer goroutine and are not reported, and a
//     select with a timer's or a context's Done case (the call, or a
//     field only such calls fill) returns when that fires. `select {}`
//     never returns: a lock held there is reported when any other
//     function of the package takes it. Every
//     goroutine that can unblock the operation must take the lock (one
//     that performs the opposite operation without it, as a
//     time.AfterFunc callback closing the channel, unblocks it anyway),
//     and operations on channels every make of which is buffered are not
//     reported (occupancy is not modelled: net/http's wantConn receives
//     under the lock only once the sender filled the buffer). Buffered
//     means a constant capacity above zero, one computed from a len or
//     cap, or a package var; a capacity from configuration or a
//     parameter may be 0 or a semaphore's bound (sizedForWork). A
//     function that reads a channel's len or cap manages its occupancy:
//     its operations on it do not block (checksOccupancy). A channel read
//     from a container's element is the one channel put there, if only
//     one is (objects.ElemSources: a broker's subscriber channels). Cond.Wait
//     blocks until a Signal or Broadcast and releases only its own lock
//     (a Wait whose lock is unknown is not taken as blocking). The
//     operations that block in a callee count at the call (condwait.go),
//     and so do those of a function passed to a callee that runs it
//     (sync.Once.Do; paramcall.go, passedBlocks).
//     In package main an exported function has no callers outside the
//     package: it is no unblocker of its own; func main is, as the main
//     goroutine. An unblocker takes the lock only if it surely does: a
//     take through a call with several candidates (an interface with
//     several implementations) is one possible object's lock, as in a
//     composite whose sources may be of its own type. A channel returned
//     by an accessor (Updates() returning a field) is that field's. Two
//     fields holding the same channels, each stored into both (a
//     receive-only and a send-only view of it), are one channel
//     (chanhome.go, twinChanFields).
//   - Callbacks stored through a setter (x.SetCb(func() { x.m() })) that
//     captured the object they were set on run with that object when
//     called through the field (selfbound.go): x.cb() under x.mu locking
//     x.mu is a double lock. So do those kept in a struct of handlers the
//     object holds (x.events.cb, up to two fields down).
//   - Loops: a lock reached from a value the loop recomputes (a phi, a
//     value computed in the loop, or a captured variable assigned in it:
//     c = c.parent; c.mu.Lock()) is another lock on the next iteration,
//     never a re-lock; so is an element's lock a helper hands on in the
//     value it returns, kept by the loop (walk.go, elementHandedOn). A defer replayed at return that was registered on
//     some paths only (or once per iteration) proves no double unlock.
//   - Leaks: a lock of an object the function creates (an allocation, or
//     the result of a package function returning a new allocation) left
//     held on a return is not reported: the object dies with the function
//     or is handed over with its lock.
//
// Limits: //confined:alias is applied for the package's own struct types
// only (the Decl fact does not carry the second path); a goroutine
// unlocking a lock it did not take is recognised only when started on a
// closure (or handed a callback) whose summary releases it.
package locks
