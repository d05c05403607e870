// Package problems: misplaced drain/commit directives are reported by
// revokepath, and //confined:ignore silences a finding. The expectations
// sit in block comments before the directives, whose text runs to the end
// of the line.
package problems

import "sync"

type Consumer struct {
	mu      sync.Mutex
	mailbox chan int64 /* // want `//confined:drain is not allowed on field Consumer\.mailbox; it belongs on a func declaration \[directive-placement\]` */ //confined:drain
	offset  int64      //confined:control
}

/* // want `role "nosuchrole" is not declared by any //confined:entry in this package or its imports \[directive-role\]` */ //confined:commit nosuchrole
func (c *Consumer) publishElsewhere() {
	_ = c.offset
}

//confined:entry
func (c *Consumer) run(tick <-chan struct{}) {
	for range tick {
		c.mu.Lock()
		//confined:ignore shutdown path: the mailbox is closed and empty here
		c.commit()
		c.mu.Unlock()
	}
}

//confined:commit
//confined:requires mu
func (c *Consumer) commit() {}
