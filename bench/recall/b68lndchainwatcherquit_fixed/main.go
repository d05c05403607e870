// Fixed twin: shape of lnd PR #1079 ("contractcourt/chain_watcher: release mutex on
// return").
//
// chainWatcher embeds a sync.Mutex that guards clientSubscriptions. When the
// funding output is spent cooperatively, dispatchCooperativeClose locks the
// watcher and hands the close summary to every subscriber. If the watcher is
// stopped while a subscriber is not reading, the quit case returns an error
// with the mutex still held. The ChannelArbitrator later cancels its
// subscription, and the Cancel closure locks the watcher forever.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type OutPoint struct {
	Hash  string
	Index uint32
}

type SpendDetail struct {
	SpendingTx     string
	SpendingHeight int32
}

type CooperativeCloseInfo struct {
	ChanPoint   OutPoint
	ClosingTXID string
	CloseHeight int32
}

type ChainEventSubscription struct {
	ChanPoint          OutPoint
	CooperativeClosure chan *CooperativeCloseInfo
	Cancel             func()
}

type chainWatcherConfig struct {
	chanPoint OutPoint
}

type chainWatcher struct {
	sync.Mutex
	cfg                 chainWatcherConfig
	quit                chan struct{}
	clientID            uint64
	clientSubscriptions map[uint64]*ChainEventSubscription
}

func newChainWatcher(cfg chainWatcherConfig) *chainWatcher {
	return &chainWatcher{cfg: cfg, quit: make(chan struct{}),
		clientSubscriptions: make(map[uint64]*ChainEventSubscription)}
}

func (c *chainWatcher) SubscribeChannelEvents() *ChainEventSubscription {
	c.Lock()
	clientID := c.clientID
	c.clientID++
	c.Unlock()

	sub := &ChainEventSubscription{
		ChanPoint:          c.cfg.chanPoint,
		CooperativeClosure: make(chan *CooperativeCloseInfo, 1),
		Cancel: func() {
			c.Lock()
			delete(c.clientSubscriptions, clientID)
			c.Unlock()
		},
	}
	c.Lock()
	c.clientSubscriptions[clientID] = sub
	c.Unlock()
	return sub
}

func (c *chainWatcher) dispatchCooperativeClose(commitSpend *SpendDetail) error {
	closeInfo := &CooperativeCloseInfo{ChanPoint: c.cfg.chanPoint,
		ClosingTXID: commitSpend.SpendingTx, CloseHeight: commitSpend.SpendingHeight}

	// With the event processed, we'll now notify all subscribers.
	c.Lock()
	for _, sub := range c.clientSubscriptions {
		select {
		case sub.CooperativeClosure <- closeInfo:
		case <-c.quit:
			c.Unlock()
			return errors.New("exiting")
		}
	}
	c.Unlock()
	return nil
}

// closeObserver runs for the life of the watcher.
func (c *chainWatcher) closeObserver(spends []*SpendDetail) {
	for _, spend := range spends {
		if err := c.dispatchCooperativeClose(spend); err != nil {
			fmt.Println("unable to handle co op close:", err)
			return
		}
	}
}

func (c *chainWatcher) Stop() { close(c.quit) }

type ChannelArbitrator struct {
	sub *ChainEventSubscription
}

func (a *ChannelArbitrator) Stop() {
	// An arbitrator that is going away stops listening first, then cancels
	// its subscription.
	a.sub.Cancel()
	fmt.Println("arbitrator for", a.sub.ChanPoint, "stopped")
}

func main() {
	watcher := newChainWatcher(chainWatcherConfig{chanPoint: OutPoint{Hash: "a1b2", Index: 0}})
	arb := &ChannelArbitrator{sub: watcher.SubscribeChannelEvents()}
	// A duplicate spend notification: the arbitrator consumes neither.
	spends := []*SpendDetail{{SpendingTx: "c0ffee", SpendingHeight: 101}, {SpendingTx: "c0ffee", SpendingHeight: 101}}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		watcher.closeObserver(spends)
	}()

	time.Sleep(20 * time.Millisecond)
	watcher.Stop() // node shutting down
	wg.Wait()
	arb.Stop()
	fmt.Println("shutdown complete")
}
