// Package directivefix: a did-you-mean is also a suggested fix.
package directivefix

import "sync"

type Conn struct {
	mu sync.Mutex
	//confined:gaurdedby mu // want `unknown directive //confined:gaurdedby; did you mean //confined:guardedby\?`
	n int
	// confined:control poll // want `the space after // hides it`
	state int
}

//confined:entry poll
func (c *Conn) run() {} // want `never calls Bind`

//confined:control pol // want `role "pol" is not declared .*; did you mean "poll"\?`
func (c *Conn) step() {}

//confined:spawns tsk // want `has no parameter tsk; did you mean task\?`
func Submit(task func()) { go task() }
