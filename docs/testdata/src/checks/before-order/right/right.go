package right

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

	c.commitMu.Lock()
	c.statsMu.Lock()
	// example:end
	n := c.commits
	c.statsMu.Unlock()
	c.commitMu.Unlock()
	return n
}
