// Package rebalancekgo: a franz-go revoke callback resets the in-flight
// counter owned by the control loop.
package rebalancekgo

import (
	"context"

	"github.com/confinelint/confinelint/confine"
	"github.com/twmb/franz-go/pkg/kgo"
)

type Buggy struct {
	owner    confine.Owner
	inflight int //confined:control
	work     chan int
}

//confined:entry
func (c *Buggy) run() {
	c.owner.Bind()
	for n := range c.work {
		c.inflight += n
		if n == 0 {
			c.resetCounters()
		}
	}
}

func (c *Buggy) resetCounters() {
	c.inflight = 0 // want `c.inflight is confined to control but written on the goroutine started by kgo.OnPartitionsRevoked: Buggy.onRevoked -> Buggy.resetCounters -> c.inflight`
}

func (c *Buggy) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	c.resetCounters()
}

func (c *Buggy) client() (*kgo.Client, error) {
	return kgo.NewClient(kgo.OnPartitionsRevoked(c.onRevoked))
}
