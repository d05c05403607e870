package consumer

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// rebalanceWait bounds how long a callback holds up the client.
const rebalanceWait = 10 * time.Second

// onAssigned runs on the client's goroutine: it tells control.
func (c *Consumer) onAssigned(ctx context.Context, _ *kgo.Client, assigned map[string][]int32) {
	ctx, cancel := context.WithTimeout(ctx, rebalanceWait)
	defer cancel()
	_ = c.ask(ctx, func() {
		for topic, ids := range assigned {
			for _, id := range ids {
				c.assigned[partition{topic, id}] = true
			}
		}
	})
}

// onRevoked hands the final commit to control and waits for it, bounded:
// control drains and commits what it applied, then forgets the partitions.
func (c *Consumer) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	ctx, cancel := context.WithTimeout(ctx, rebalanceWait)
	defer cancel()
	_ = c.ask(ctx, func() {
		c.flush(ctx)
		c.forget(revoked)
	})
}

// onLost forgets without committing: the partitions are someone else's.
func (c *Consumer) onLost(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
	ctx, cancel := context.WithTimeout(ctx, rebalanceWait)
	defer cancel()
	_ = c.ask(ctx, func() { c.forget(lost) })
}

func (c *Consumer) forget(parts map[string][]int32) {
	for topic, ids := range parts {
		for _, id := range ids {
			p := partition{topic, id}
			delete(c.assigned, p)
			delete(c.done, p)
			delete(c.pending, p)
		}
	}
}
