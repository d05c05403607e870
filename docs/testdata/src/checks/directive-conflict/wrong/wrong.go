package wrong

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

type Consumer struct{ revoked int }

func (c *Consumer) client() (*kgo.Client, error) {
	return kgo.NewClient(kgo.OnPartitionsRevoked(c.onRevoked))
}

// example:start

//confined:callback
//confined:control // want `//confined:control contradicts //confined:callback on line \d+: a function is confined to one role .*\[directive-conflict\]`
func (c *Consumer) onRevoked(context.Context, *kgo.Client, map[string][]int32) {
	c.revoked++
}

// example:end
