package right

import (
	"context"

	"github.com/confinelint/confinelint/confine"
	"github.com/twmb/franz-go/pkg/kgo"
)

type Consumer struct {
	owner    confine.Owner //confined:control
	inflight int           //confined:control
}

//confined:entry
func (c *Consumer) run() { c.owner.Bind() }

func (c *Consumer) client() (*kgo.Client, error) {
	return kgo.NewClient(kgo.BlockRebalanceOnPoll(), kgo.OnPartitionsRevoked(c.onRevoked))
}

func (c *Consumer) onRevoked(context.Context, *kgo.Client, map[string][]int32) {
	// example:start

	//confined:ignore runs only while run is parked in PollFetches (kgo.BlockRebalanceOnPoll)
	c.inflight = 0
	// example:end
}
