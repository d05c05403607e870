// Package serialized: franz-go's BlockRebalanceOnPoll runs the revoke
// callback only while the poll loop is parked between AllowRebalance and
// the next PollFetches, so the callback may touch control's state: it is
// declared //confined:serialized control, and the loop lends its owner for
// that window (Lend/Reclaim) so that the callback's Assert holds at run
// time.
package serialized

import (
	"context"

	"github.com/confinelint/confinelint/confine"
	"github.com/twmb/franz-go/pkg/kgo"
)

type Consumer struct {
	owner    confine.Owner //confined:control
	cl       *kgo.Client
	inflight int //confined:control
	pollOwn  confine.Owner
	polls    int //confined:control poll
}

func New() (*Consumer, error) {
	c := &Consumer{}
	cl, err := kgo.NewClient(
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsLost(func(ctx context.Context, cl *kgo.Client, lost map[string][]int32) {
			c.onRevoked(ctx, cl, lost) // a closure around the serialized method: still serialized
		}),
		kgo.OnPartitionsAssigned(c.onAssigned),
	)
	c.cl = cl
	return c, err
}

//confined:entry
func (c *Consumer) Run(ctx context.Context) {
	c.owner.Bind()
	defer c.owner.Release()
	c.owner.Lend()
	for ctx.Err() == nil {
		fetches := c.cl.PollFetches(ctx)
		c.owner.Reclaim()
		c.inflight += len(fetches)
		c.owner.Lend() // callbacks may run from AllowRebalance until PollFetches returns
		c.cl.AllowRebalance()
	}
	c.owner.Reclaim()
}

//confined:entry poll
func (c *Consumer) poll() {
	c.pollOwn.Bind()
	c.polls++
}

// onRevoked runs on the client's goroutine, serialized with control.
//
//confined:serialized control
func (c *Consumer) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	c.owner.Assert()
	c.inflight = 0
	c.reset()
	c.polls = 0 // want `c\.polls is confined to poll but written on the goroutine running Consumer\.onRevoked \(serialized with control\): Consumer\.onRevoked -> c\.polls \[foreign-access\]`
}

func (c *Consumer) reset() { c.inflight = 0 }

// onAssigned forgot the runtime half.
//
//confined:serialized control
func (c *Consumer) onAssigned(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) { // want `Consumer\.onAssigned is //confined:serialized control and runs on another goroutine, but never calls Assert\(\) on its confine\.Owner.*\[missing-assert\]`
	c.inflight = 0
}

// Plain is an ordinary callback: touching control's state there is still
// a finding.
type Plain struct {
	owner    confine.Owner //confined:control
	inflight int           //confined:control
}

func (p *Plain) client() (*kgo.Client, error) {
	return kgo.NewClient(kgo.OnPartitionsRevoked(p.onRevoked))
}

//confined:entry
func (p *Plain) run() { p.owner.Bind() }

func (p *Plain) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	p.inflight = 0 // want `p\.inflight is confined to control but written on the goroutine started by kgo\.OnPartitionsRevoked`
}
