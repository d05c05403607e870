package annotated

import "sync"

type Conn struct {
	mu    sync.RWMutex
	state int        //confined:guardedby mu
	wmu   sync.Mutex //confined:before mu
}

// The caller holds mu: accesses inside are fine.
//
//confined:requires mu
func (c *Conn) setState(s int) { c.state = s }

//confined:requires_shared mu
func (c *Conn) getState() int { return c.state }

//confined:acquires mu
func (c *Conn) lock() { c.mu.Lock() }

//confined:releases mu
func (c *Conn) unlock() { c.mu.Unlock() }

//confined:excludes mu
func (c *Conn) refresh() {
	c.mu.Lock()
	c.state = 0
	c.mu.Unlock()
}

func (c *Conn) good() {
	c.lock()
	c.setState(1)
	_ = c.getState()
	c.unlock()
	c.refresh()
}

func (c *Conn) bad() {
	c.setState(1) // want `call to Conn.setState requires Conn.mu held exclusively, but it is not held here \[requires\]`
	c.mu.RLock()
	c.setState(2) // want `call to Conn.setState requires Conn.mu held exclusively, but it is only read-locked here \[requires\]`
	_ = c.getState()
	c.refresh() // want `call to Conn.refresh while holding Conn.mu \(taken at annotated.go:42\): it must not be held \[excludes\]` `Lock of Conn.mu by Conn.refresh \(at annotated.go:27\) while read-locked since annotated.go:42: a read lock cannot be upgraded, this deadlocks \[lock-upgrade\]`
	c.mu.RUnlock()
	_ = c.getState() // want `call to Conn.getState requires Conn.mu held \(at least shared\) \[requires\]`
}

//confined:acquires mu
func (c *Conn) lockSometimes(x int) { // want `Conn.mu is declared acquired but is not held on this return path \(at the implicit return, annotated.go:55\) \[acquires\]`
	if x > 0 {
		c.mu.Lock()
	}
}

//confined:releases mu
func (c *Conn) forgetsRelease() { // want `Conn.mu is declared released but is still held on this return path \(at the implicit return, annotated.go:60\) \[releases\]`
	c.state = 1
}

func (c *Conn) order() {
	c.mu.Lock()
	c.wmu.Lock() // want `Conn.wmu is declared before Conn.mu but is taken while Conn.mu is held \(since annotated.go:63\) \[before-order\]`
	c.wmu.Unlock()
	c.mu.Unlock()
}

func (c *Conn) orderOK() {
	c.wmu.Lock()
	c.mu.Lock()
	c.mu.Unlock()
	c.wmu.Unlock()
}
