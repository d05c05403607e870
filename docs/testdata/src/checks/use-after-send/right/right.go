package right

import "github.com/confinelint/confinelint/confine"

type partState struct{ inflight int }

type Consumer struct {
	owner confine.Owner //confined:control
	in    chan string
	out   chan *partState
	// example:start

	parts map[string]*partState //confined:control
	// example:end
}

//confined:entry
func (c *Consumer) run() {
	c.owner.Bind()
	for key := range c.in {
		c.handOver(key)
	}
}

// example:start

func (c *Consumer) handOver(key string) {
	ps := c.parts[key]
	ps.inflight = 0
	delete(c.parts, key)
	c.out <- ps // the receiver owns it now
}

// example:end
