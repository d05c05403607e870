package checklocks_force

import "sync"

// A lock-order inversion reported on a +checklocksforce line is dropped
// there (the force says the author checked that line), also when it
// closes two cycles at once, and dropping it must not disturb the
// findings around it.
type trio struct {
	a sync.Mutex
	b sync.Mutex
	c sync.Mutex
}

func (t *trio) ab() {
	t.a.Lock()
	t.b.Lock()
	t.b.Unlock()
	t.a.Unlock()
}

func (t *trio) ac() {
	t.a.Lock()
	t.c.Lock()
	t.c.Unlock()
	t.a.Unlock()
}

func (t *trio) bca() {
	t.b.Lock()
	t.c.Lock()
	t.a.Lock() // +checklocksforce: ab and ac never run concurrently with bca
	t.a.Unlock()
	t.c.Unlock()
	t.b.Unlock()
}
