package cyclegroups

import "testing"

// A test that freezes the pair in the other order: a deadlock only in
// tests, reported under its own rule at the test's acquisition.
func TestFreeze(t *testing.T) {
	p := &Prod{}
	go p.Work()
	p.n.Lock()
	p.m.Lock() // want `lock order inversion in test code: Prod.m then Prod.n in Prod.Work .* but Prod.n then Prod.m in TestFreeze .*\[lock-order-test\]`
	p.m.Unlock()
	p.n.Unlock()
}

// A test that holds one engine's part lock across another engine's
// compaction and snapshot: one hold, one finding, however many locks it
// takes under it.
func TestHoldPart(t *testing.T) {
	e1, e2 := &Engine{}, &Engine{}
	go e1.Compact()
	go e2.Snapshot()
	e1.part.mu.Lock()
	e2.Compact()
	e2.Snapshot() // want `lock order inversion in test code: Engine.snapMu then Part.mu in Engine.Snapshot .* but Part.mu then Engine.snapMu in TestHoldPart .*; the test's hold of Part.mu closes 2 lock-order cycles \[lock-order-test\]`
	e1.part.mu.Unlock()
}
