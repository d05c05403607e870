package right

import (
	"errors"
	"sync"
)

var errClosed = errors.New("closed")

type Cache struct {
	mu     sync.Mutex
	closed bool
}

// example:start

//confined:acquires mu
func (c *Cache) lock() error {
	c.mu.Lock()
	if c.closed {
		return errClosed // with c.mu held, as declared
	}
	return nil
}

// example:end
