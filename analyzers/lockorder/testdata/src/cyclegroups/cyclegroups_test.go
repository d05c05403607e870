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
