package right

import "testing"

// example:start

func TestFreeze(t *testing.T) {
	p := &Pair{}
	go p.Work()
	p.m.Lock() // the production order
	p.n.Lock()
	p.n.Unlock()
	p.m.Unlock()
}

// example:end
