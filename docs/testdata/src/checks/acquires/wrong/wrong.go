package wrong

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
	if c.closed {
		return errClosed // want `\[acquires\]`
	}
	c.mu.Lock()
	return nil
}

// example:end
