// Package features_generated: revokepath findings in a generated file are
// not reported; the same code written by hand is.
package features_generated

import "sync"

type C struct {
	mu sync.Mutex
}

//confined:commit
//confined:requires mu
func (c *C) commit() {}

//confined:control
func (c *C) handWritten() {
	c.mu.Lock()
	c.commit() // want `commit C\.commit \(publishes control progress\) can run without a drain of control's mailbox after C\.mu is taken`
	c.mu.Unlock()
}
