package wrong

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
	c.out <- ps
	ps.inflight = 0 // want `ps is sent on c\.out at wrong\.go:\d+, which hands it to the receiver, but written afterwards: c\.parts -> c\.out <- ps -> ps\.inflight \[use-after-send\]`
}

// example:end
