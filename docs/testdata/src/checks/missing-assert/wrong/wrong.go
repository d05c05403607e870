package wrong

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner  confine.Owner //confined:control poll
	paused bool          //confined:control poll
	polls  int           //confined:control poll
}

//confined:entry poll
func (c *Consumer) run() {
	c.owner.Bind()
	c.polls++
}

// example:start

//confined:control poll
func (c *Consumer) Pause() { // want `Consumer\.Pause is //confined:control poll and callable from code the analysis cannot see, but never calls Assert\(\) on its confine\.Owner \[missing-assert\]`
	c.paused = true
}

// example:end
