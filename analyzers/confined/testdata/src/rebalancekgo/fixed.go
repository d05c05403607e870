package rebalancekgo

import (
	"context"
	"time"

	"github.com/confinelint/confinelint/confine"
	"github.com/twmb/franz-go/pkg/kgo"
)

type resetReq struct{ done chan struct{} }

// Fixed hands the reset to its control goroutine and waits, bounded.
type Fixed struct {
	owner    confine.Owner
	inflight int //confined:control
	work     chan int
	resets   chan resetReq
}

//confined:entry
func (c *Fixed) run() {
	c.owner.Bind()
	for {
		select {
		case n := <-c.work:
			c.inflight += n
		case r := <-c.resets:
			c.resetCounters()
			close(r.done)
		}
	}
}

func (c *Fixed) resetCounters() { c.inflight = 0 }

func (c *Fixed) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	r := resetReq{done: make(chan struct{})}
	select {
	case c.resets <- r:
	case <-time.After(time.Second):
		return
	}
	select {
	case <-r.done:
	case <-time.After(time.Second):
	}
}

func (c *Fixed) client() (*kgo.Client, error) {
	return kgo.NewClient(kgo.OnPartitionsRevoked(c.onRevoked))
}
