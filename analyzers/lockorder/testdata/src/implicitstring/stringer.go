package implicitstring

import (
	"errors"
	"fmt"
	"log"
	"sync"
)

type Conn struct {
	mu    sync.RWMutex
	addr  string
	state int
}

func (c *Conn) String() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return fmt.Sprintf("conn %s (%d)", c.addr, c.state)
}

// Formatting c calls its String method: a recursive read lock.
func (c *Conn) close() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	log.Printf("closing %v", c) // want `RLock of Conn.mu by Conn.String \(at stringer.go:17\) while already read-locked since stringer.go:24: deadlocks behind a waiting writer \[double-lock\]`
}

func (c *Conn) reset() {
	c.mu.Lock()
	c.state = 0
	fmt.Println("reset", c) // want `Conn.mu locked again by Conn.String \(at stringer.go:17\) while held since stringer.go:30: self-deadlock \[double-lock\]`
	c.mu.Unlock()
}

// Correct: formatting after the unlock, or formatting a field, not c.
func (c *Conn) open() {
	c.mu.Lock()
	c.state = 1
	addr := c.addr
	c.mu.Unlock()
	log.Printf("opened %v at %s", c, addr)
}

// Error methods are called the same way.
type Fault struct {
	mu   sync.Mutex
	code int
}

func (f *Fault) Error() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprint("fault ", f.code)
}

func (f *Fault) raise() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.code++
	return fmt.Errorf("raised: %w", f) // want `Fault.mu locked again by Fault.Error \(at stringer.go:52\) while held since stringer.go:58: self-deadlock \[double-lock\]`
}

// Correct: the error is wrapped, not formatted, under the lock.
func (f *Fault) wrap() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.code++
	return errors.Join(errors.New("wrapped"), f)
}

// Correct: a value with no String method is formatted field by field.
type Plain struct {
	mu sync.Mutex
	n  int
}

func (p *Plain) dump() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Printf("%d %v\n", p.n, p)
}
