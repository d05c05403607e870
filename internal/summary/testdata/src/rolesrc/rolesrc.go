package rolesrc // want package:"roles\\(poll\\)"

import "sync"

// Poller runs the poll loop.
type Poller struct {
	mu sync.Mutex
	//confined:guardedby mu
	count int // want count:"decl\\(guardedby mu\\)"
}

// Poll is the poll goroutine.
//
//confined:entry poll
func (p *Poller) Poll() { // want Poll:"decl\\(entry poll\\)" Poll:"flows\\(stays\\)"
}
