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

//confined:releases mu
func (c *Cache) unlock() {
	c.mu.Unlock()
}

// example:end

var _ = errClosed
