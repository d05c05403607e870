// Project: lnd (htlcswitch/link.go)
// Bug: HtlcSatisfiesPolicy holds the link's read lock for its whole body; on a
// policy failure it logs via l.ShortChanID(), which takes the same RLock
// again. If UpdateForwardingPolicy (switch goroutine) queues for the write
// lock in between, the nested RLock blocks behind the writer, which waits
// for the first RLock: recursive read lock with a pending writer.
// Upstream fix: only hold the read lock while copying the policy (lightningnetwork/lnd#1339).
package main

import (
	"fmt"
	"sync"
	"time"
)

type MilliSatoshi uint64

type ShortChannelID struct{ BlockHeight, TxIndex, TxPosition uint32 }

func (s ShortChannelID) String() string {
	return fmt.Sprintf("%d:%d:%d", s.BlockHeight, s.TxIndex, s.TxPosition)
}

type ForwardingPolicy struct {
	MinHTLC       MilliSatoshi
	BaseFee       MilliSatoshi
	TimeLockDelta uint32
}

type FailureMessage interface{ Error() string }

type FailAmountBelowMinimum struct{ HtlcMsat MilliSatoshi }

func (f *FailAmountBelowMinimum) Error() string {
	return fmt.Sprintf("AmountBelowMinimum(amt=%d)", f.HtlcMsat)
}

type channelLinkConfig struct{ FwrdingPolicy ForwardingPolicy }

type channelLink struct {
	sync.RWMutex
	cfg         channelLinkConfig
	shortChanID ShortChannelID
}

func (l *channelLink) ShortChanID() ShortChannelID {
	l.RLock() // DEADLOCK HERE
	defer l.RUnlock()
	return l.shortChanID
}

func (l *channelLink) UpdateForwardingPolicy(newPolicy ForwardingPolicy) {
	l.Lock()
	defer l.Unlock()
	l.cfg.FwrdingPolicy = newPolicy
}

func (l *channelLink) HtlcSatisfiesPolicy(payHash [32]byte,
	incomingHtlcAmt, amtToForward MilliSatoshi) FailureMessage {

	l.RLock()
	defer l.RUnlock()

	policy := l.cfg.FwrdingPolicy
	if amtToForward < policy.MinHTLC {
		time.Sleep(20 * time.Millisecond) // fetch last channel update
		fmt.Printf("outgoing htlc(%x) is too small: min_htlc=%v, htlc_value=%v, chan_id=%v\n",
			payHash[:4], policy.MinHTLC, amtToForward, l.ShortChanID())
		return &FailAmountBelowMinimum{HtlcMsat: amtToForward}
	}
	return nil
}

func main() {
	link := &channelLink{
		cfg:         channelLinkConfig{FwrdingPolicy: ForwardingPolicy{MinHTLC: 1000, BaseFee: 1, TimeLockDelta: 40}},
		shortChanID: ShortChannelID{BlockHeight: 525000, TxIndex: 12, TxPosition: 1},
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		fail := link.HtlcSatisfiesPolicy([32]byte{0xab, 0xcd}, 600, 500)
		fmt.Println("policy check:", fail)
	}()

	time.Sleep(5 * time.Millisecond)
	link.UpdateForwardingPolicy(ForwardingPolicy{MinHTLC: 2000, BaseFee: 2, TimeLockDelta: 144})
	<-done
	fmt.Println("policy updated")
}
