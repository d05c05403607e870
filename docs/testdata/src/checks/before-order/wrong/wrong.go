package wrong

import "sync"

type Consumer struct {
	// example:start

	commitMu sync.Mutex //confined:before statsMu
	statsMu  sync.Mutex
	// example:end
	commits int
}

func (c *Consumer) Stats() int {
	// example:start

	c.statsMu.Lock()
	c.commitMu.Lock() // want `Consumer\.commitMu is declared before Consumer\.statsMu but is taken while Consumer\.statsMu is held .*\[before-order\]`
	// example:end
	n := c.commits
	c.commitMu.Unlock()
	c.statsMu.Unlock()
	return n
}
