// Package rebalancesarama: a sarama ConsumerGroupHandler decrements the
// in-flight counter owned by the control loop.
package rebalancesarama

import (
	"github.com/IBM/sarama"
	"github.com/confinelint/confinelint/confine"
)

//confined:control
type state struct {
	inflight int
	applied  map[int32]int64
}

type Buggy struct {
	owner confine.Owner
	st    state
	done  chan *sarama.ConsumerMessage
}

//confined:entry
func (h *Buggy) run() {
	h.owner.Bind()
	for m := range h.done {
		h.st.applied[m.Partition] = m.Offset
	}
}

func (h *Buggy) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *Buggy) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *Buggy) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.st.inflight-- // want `h.st.inflight is confined to control but written on a sarama.ConsumerGroupHandler.ConsumeClaim goroutine: Buggy.ConsumeClaim -> h.st.inflight`
		h.done <- m
	}
	return nil
}
