package rebalancesarama

import (
	"time"

	"github.com/IBM/sarama"
	"github.com/confinelint/confinelint/confine"
)

// Fixed only hands messages to the control goroutine, which owns the
// counters; the handoff is bounded.
type Fixed struct {
	owner confine.Owner
	st    state
	done  chan *sarama.ConsumerMessage
}

//confined:entry
func (h *Fixed) run() {
	h.owner.Bind()
	for m := range h.done {
		h.st.inflight--
		h.st.applied[m.Partition] = m.Offset
	}
}

func (h *Fixed) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *Fixed) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *Fixed) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		select {
		case h.done <- m:
		case <-time.After(time.Second):
			return nil
		}
	}
	return nil
}
