// Package lockorder defines an Analyzer that reports lock-order inversions, self-deadlocks, leaked locks and violations of lock annotations.
//
// # Analyzer lockorder
//
// lockorder: reports lock-order inversions, self-deadlocks, leaked locks and violations of lock annotations.
//
// Without annotations it finds cycles in the acquired-while-holding graph of
// lock classes (the field or package variable declaring each lock), a lock
// taken twice on one path, unlocks of locks not held and paths that return
// with a lock held. With //confined:guardedby, requires, acquires, releases,
// excludes and before (or gVisor checklocks comments) it checks each access
// and call against the declared contract, with full RWMutex semantics.
//
// Rules: lock-order, double-lock, lock-upgrade, lock-leak, unlock-not-held,
// guardedby, guardedby-write-shared, requires, excludes, acquires,
// releases, before-order, atomic, blocking-held.
//
// See docs/checks.md for every rule with a wrong and a right example, and
// internal/locks for the decisions where the contract is silent.
package lockorder
