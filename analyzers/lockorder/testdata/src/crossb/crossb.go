package crossb

import "crossa"

func inverted(r *crossa.Registry) {
	r.Mu.Lock()
	crossa.Touch() // want `lock order inversion: Global then Registry.Mu in crossa.Register \(crossa.go:16 -> crossa.go:18\) but Registry.Mu then Global in inverted \(crossb.go:6 -> crossb.go:7 via crossa.Touch\) \[lock-order\]`
	r.Mu.Unlock()
}

func doubled(r *crossa.Registry) {
	r.Lock()
	r.Mu.Lock() // want `Registry.Mu locked again while held since crossb.go:12: self-deadlock \[double-lock\]`
	r.Mu.Unlock()
	r.Mu.Unlock()
}

func fine(r *crossa.Registry) {
	crossa.Touch()
	r.Lock()
	r.Mu.Unlock()
}

func deposit(a *crossa.Account) {
	a.Deposit(1) // want `call to crossa.Account.Deposit requires Account.Mu held exclusively, but it is not held here \[requires\]`
	a.Mu.RLock()
	_ = a.Balance
	a.Balance = 2 // want `write to Account.Balance with Account.Mu only read-locked \(since crossb.go:26\): writes need Lock \[guardedby-write-shared\]`
	a.Mu.RUnlock()
	a.Mu.Lock()
	a.Deposit(2)
	a.Mu.Unlock()
}

// The catalog is read-locked on both sides of this cycle: the message
// says it deadlocks only behind a writer (crossa's Put is one).
func reindex(c *crossa.Catalog, x *crossa.Index) {
	x.Mu.Lock()
	defer x.Mu.Unlock()
	c.Mu.RLock() // want `lock order inversion: Catalog.Mu then Index.Mu in crossa.Browse \(crossa.go:\d+ -> crossa.go:\d+\) but Index.Mu then Catalog.Mu in reindex \(crossb.go:\d+ -> crossb.go:\d+\); Catalog.Mu is read-locked on both sides, so this blocks only behind a waiting writer \(none in this package write-locks it\) \[lock-order\]`
	c.Mu.RUnlock()
}
