package checklocks_returns

import "sync"

// A lock that guards annotated fields, left held on every return of a
// function that does not declare it: reported at each return (the
// contract's rule; checklocks' "return with unexpected locks held").
// The function's effect is still inferred, so its callers are not
// reported a second time.

func (c *cache) lockHits() { // want `cache.mu taken at undeclared.go:\d+ is still held when the function returns, but the function does not declare it: cache.mu is annotated \(a guard or a function names it\), so declare //confined:acquires c.mu \(or \+checklocksacquire\) or release it \(at the implicit return, undeclared.go:\d+\) \[acquires\]`
	c.mu.Lock()
}

func (c *cache) peek() int {
	c.mu.Lock()
	return c.hits // want `cache.mu taken at undeclared.go:\d+ is still held when the function returns, but the function does not declare it: .*declare //confined:acquires c.mu .*\[acquires\]`
}

func (c *cache) usesHelper() {
	c.lockHits()
	c.hits++
	c.mu.Unlock()
}

// Declared, in either spelling: silent.

//confined:acquires c.mu
func (c *cache) lockDeclared() {
	c.mu.Lock()
}

// +checklocksacquire:c.mu
func (c *cache) lockDeclaredChecklocks() {
	c.mu.Lock()
}

// spare is named by no annotation: an unannotated lock helper, inferred.
func (c *cache) lockSpare() {
	c.spare.Lock()
}

// rw guards no field, but functions declare requirements on it: annotated.
func (c *cache) lockRW() { // want `cache.rw taken at undeclared.go:\d+ is still held when the function returns, but the function does not declare it: .*\[acquires\]`
	c.rw.Lock()
}

// The Lock method of a Locker type says by its name what it leaves held.
type table struct {
	mu sync.Mutex
	// +checklocks:mu
	rows int
}

func (t *table) Lock()   { t.mu.Lock() }
func (t *table) Unlock() { t.mu.Unlock() }

// A new object handed out locked is not a helper of anyone's lock.
func newLocked() *cache {
	c := &cache{}
	c.mu.Lock()
	return c
}

// Released on every return: nothing left.
func (c *cache) bump() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits++
}

// dropAround is called with c.mu held (its name says so, no annotation)
// and lets it go around slow work: held again on return, as on entry, so
// nothing is acquired. Silent.
func (c *cache) dropAround(slow func()) {
	c.mu.Unlock()
	slow()
	c.mu.Lock()
}

func (c *cache) callsDropAround() {
	c.mu.Lock()
	c.dropAround(func() {})
	c.hits++
	c.mu.Unlock()
}
