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

//confined:releases mu
func (c *Cache) unlockIf(ok bool) {
	if !ok {
		return // want `Cache\.mu is declared released but is still held on this return path \[releases\]`
	}
	c.mu.Unlock()
}

// example:end

var _ = errClosed
