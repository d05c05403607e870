// Package features_tests: test files and an external test package are
// analysed for lock discipline too.
package features_tests

import "sync"

type Counter struct {
	mu sync.Mutex
	N  int //confined:guardedby mu
}

func (c *Counter) Inc() {
	c.mu.Lock()
	c.N++
	c.mu.Unlock()
}
