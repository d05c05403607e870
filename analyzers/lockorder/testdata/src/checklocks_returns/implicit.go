package checklocks_returns

// A finding at the implicit return at the end of a body is reported at
// the function's name, as checklocks does, with the closing brace and
// the unlock as related information (TestImplicitReturnRelated); one at
// a return statement stays there (dropsRequired).

// +checklocks:c.mu
func (c *cache) releasesRequired() { // want `cache.mu is required by the function and must still be held exclusively when it returns \(at the implicit return, implicit.go:12\) \[requires\]`
	c.hits++
	c.mu.Unlock()
}

// Released and taken again: held at the end, silent.
//
// +checklocks:c.mu
func (c *cache) retakesRequired() {
	c.mu.Unlock()
	c.mu.Lock()
	c.hits++
}
