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
//     holds never produce double-lock, leak, guard or requires findings,
//     nor order edges: a path-insensitive analysis cannot tell
//     `if c { mu.Lock() } ... if c { mu.Unlock() }` from a bug. The one
//     exception: a lock maybe-held only over a loop back-edge, locked again
//     in the loop and unlocked somewhere in the function, is a re-lock on
//     the next iteration [lock-leak].
//   - Double lock compares symbolic paths: a.mu then b.mu of two values of
//     one type is not reported (lockdep would report same-class nesting;
//     it is common and usually ordered by the program, e.g. by address).
//     Same-class nesting also adds no order edge. Locks behind a
//     sync.Locker interface are never double-locked (RLocker).
//   - Leaks: a lock taken here, definitely held on one return path and
//     definitely released on another, leaks on the first. A lock held on
//     every return is the function's effect (a lock helper): inferred like
//     `acquires`, applied at call sites and exported. Locks taken by
//     TryLock and locks whose unlock is handed to a closure passed to a
//     call (a completion callback) are not leaks. Panicking paths (the
//     recover block) are not return paths.
//   - Unlock not held: only when the same path was unlocked before on every
//     path (a double unlock). An unlock of a lock never taken in the
//     function releases the caller's lock and becomes part of its summary.
//   - Closures passed to a call other than go/defer are assumed to run now
//     (the contract) but may be kept: the caller's locks are maybe-held in
//     them, which silences guard findings without creating edges.
//   - Calls through func-typed fields take the edges of every function of
//     the package stored into that field; interface calls those of the
//     package's types implementing the interface. Neither changes the
//     lock state (the callee is not known exactly).
//   - Edges are exported as the package's own; the facts of every
//     transitive dependency are visible to the analysis (AllPackageFacts),
//     so a cycle across packages is found where it closes. Each cycle is
//     reported once, at the latest acquisition observed in the package.
//     A cycle through an edge that breaks a declared `before` order is
//     reported as [before-order] only.
//   - Guards: a write is a store, ++, map insert/delete, append assigned
//     back, or the address taken for anything but a sync/atomic call;
//     accesses through a value allocated in the same function are
//     construction (publication is not tracked).
//   - Blocking (blocking.go): see the comment there; timers, contexts and
//     time.Sleep have no peer goroutine and are not reported.
//
// Limits: //confined:alias is applied for the package's own struct types
// only (the Decl fact does not carry the second path); a goroutine
// unlocking a lock it did not take is recognised only when started on a
// closure (or handed a callback) whose summary releases it.
package locks
