package wrong

import "testing"

// example:start

func TestFreeze(t *testing.T) {
	p := &Pair{}
	go p.Work()
	p.n.Lock()
	p.m.Lock() // want `\[lock-order-test\]`
	p.m.Unlock()
	p.n.Unlock()
}

// example:end
