package wrong

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner  confine.Owner //confined:control poll
	paused bool          //confined:control poll
	polls  int           //confined:control poll
}

// example:start

//confined:entry poll
func (c *Consumer) run() { // want `Consumer\.run is the //confined:entry of poll's goroutine but never calls Bind\(\) on its confine\.Owner, so runtime assertions cannot check it \[missing-bind\]`
	for !c.paused {
		c.pollOnce()
	}
}

// example:end

func (c *Consumer) pollOnce() { c.polls++ }
