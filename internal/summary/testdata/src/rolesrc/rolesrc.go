package rolesrc // want package:"roles\\(poll\\)"

import "sync"

// Poller runs the poll loop.
type Poller struct {
	mu    sync.Mutex
	count int //confined:guardedby mu
}

// Poll is the poll goroutine.
//
//confined:entry poll
func (p *Poller) Poll() { // want Poll:"decl\\(entry poll\\)"
}
