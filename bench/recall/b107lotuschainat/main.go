// Project: filecoin-project/lotus (chain/events/events_height.go heightEvents.ChainAt and headChangeAt, chain/events/tscache.go tipSetCache.best), lotus v1.2/v1.4, December 2020 (fixed by PR #5160 "fix(events): unlock mutex before error returns"; the exact error path is reconstructed, approximate).
// Bug: ChainAt locks e.lk (dropping and retaking it around the immediate handler call, "tricky locking") but returns the error from e.tsc.best() with e.lk still held. best() falls back to the node API's ChainHead when the tipset cache is empty, so a failed ChainHead call (lotus-miner talks to the daemon over JSON-RPC) leaks e.lk; the next head change (headChangeAt) and the caller's retry of ChainAt then block on e.lk forever and all height-triggered miner logic stops. The fix unlocks e.lk before both error returns.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type ChainEpoch int64

type TipSet struct{ height ChainEpoch }

func (ts *TipSet) Height() ChainEpoch { return ts.height }

type tsCacheAPI interface {
	ChainGetTipSetByHeight(context.Context, ChainEpoch) (*TipSet, error)
	ChainHead(context.Context) (*TipSet, error)
}

// tipSetCache is a ring buffer of recent tipsets (chain/events/tscache.go).
type tipSetCache struct {
	mu      sync.RWMutex
	cache   []*TipSet
	start   int
	len     int
	storage tsCacheAPI
}

func normalModulo(n, m int) int { return ((n % m) + m) % m }

func (tsc *tipSetCache) add(ts *TipSet) error {
	tsc.mu.Lock()
	defer tsc.mu.Unlock()
	if tsc.len > 0 && tsc.cache[tsc.start].Height() >= ts.Height() {
		return fmt.Errorf("tipSetCache.add: expected new tipset height to be at least %d, was %d", tsc.cache[tsc.start].Height()+1, ts.Height())
	}
	nextH := ts.Height()
	if tsc.len > 0 {
		nextH = tsc.cache[tsc.start].Height() + 1
	}
	for ; nextH <= ts.Height(); nextH++ { // null rounds are stored as nil
		tsc.start = normalModulo(tsc.start+1, len(tsc.cache))
		tsc.cache[tsc.start] = nil
		if tsc.len < len(tsc.cache) {
			tsc.len++
		}
	}
	tsc.cache[tsc.start] = ts
	return nil
}

func (tsc *tipSetCache) get(height ChainEpoch) (*TipSet, error) {
	tsc.mu.RLock()
	if tsc.len == 0 {
		tsc.mu.RUnlock()
		return tsc.storage.ChainGetTipSetByHeight(context.TODO(), height)
	}
	headH := tsc.cache[tsc.start].Height()
	if height > headH {
		tsc.mu.RUnlock()
		return nil, fmt.Errorf("tipSetCache.get: requested tipset not in cache (req: %d, cache head: %d)", height, headH)
	}
	if int(headH-height) >= tsc.len {
		tsc.mu.RUnlock()
		return tsc.storage.ChainGetTipSetByHeight(context.TODO(), height)
	}
	ts := tsc.cache[normalModulo(tsc.start-int(headH-height), len(tsc.cache))]
	tsc.mu.RUnlock()
	return ts, nil
}

func (tsc *tipSetCache) getNonNull(height ChainEpoch) (*TipSet, error) {
	for {
		ts, err := tsc.get(height)
		if err != nil || ts != nil {
			return ts, err
		}
		height++
	}
}

func (tsc *tipSetCache) best() (*TipSet, error) {
	tsc.mu.RLock()
	defer tsc.mu.RUnlock()
	best := tsc.cache[tsc.start]
	if best == nil {
		return tsc.storage.ChainHead(context.TODO())
	}
	return best, nil
}

type (
	HeightHandler func(ctx context.Context, ts *TipSet, curH ChainEpoch) error
	RevertHandler func(ctx context.Context, ts *TipSet) error
	triggerID     uint64
)

type heightHandler struct {
	confidence int
	called     bool
	handle     HeightHandler
	revert     RevertHandler
}

type heightEvents struct {
	lk               sync.Mutex
	tsc              *tipSetCache
	gcConfidence     ChainEpoch
	ctr              triggerID
	heightTriggers   map[triggerID]*heightHandler
	htTriggerHeights map[ChainEpoch][]triggerID
	htHeights        map[ChainEpoch][]triggerID
	ctx              context.Context
}

func (e *heightEvents) headChangeAt(rev, app []*TipSet) error {
	e.lk.Lock()
	defer e.lk.Unlock()
	// reverts elided: revert handlers are called with e.lk dropped, like below
	for _, ts := range app {
		if err := e.tsc.add(ts); err != nil {
			return err
		}
		for h := ts.Height(); ; h-- { // this tipset and the null rounds below it
			if h < ts.Height() {
				if cts, err := e.tsc.get(h); err != nil || cts != nil {
					break
				}
			}
			for _, tid := range e.htTriggerHeights[h] {
				hnd := e.heightTriggers[tid]
				incTs, err := e.tsc.getNonNull(h - ChainEpoch(hnd.confidence))
				if err != nil {
					return err
				}
				handle := hnd.handle
				e.lk.Unlock()
				err = handle(e.ctx, incTs, h)
				e.lk.Lock()
				hnd.called = true
				if err != nil {
					fmt.Printf("chain trigger (@H %d) failed: %v\n", h, err)
				}
			}
		}
	}
	return nil
}

// ChainAt invokes the specified HeightHandler when the chain reaches the
// specified height+confidence threshold.
func (e *heightEvents) ChainAt(hnd HeightHandler, rev RevertHandler, confidence int, h ChainEpoch) error {
	e.lk.Lock() // Tricky locking, check your locks if you modify this function!

	best, err := e.tsc.best()
	if err != nil {
		return fmt.Errorf("error getting best tipset: %w", err)
	}

	bestH := best.Height()
	if bestH >= h+ChainEpoch(confidence) {
		ts, _ := e.tsc.getNonNull(h)
		e.lk.Unlock()
		if err := hnd(e.ctx, ts, bestH); err != nil {
			return err
		}
		e.lk.Lock()
		best, err = e.tsc.best()
		if err != nil {
			return fmt.Errorf("error getting best tipset: %w", err)
		}
		bestH = best.Height()
	}

	defer e.lk.Unlock()

	if bestH >= h+ChainEpoch(confidence)+e.gcConfidence {
		return nil
	}
	triggerAt := h + ChainEpoch(confidence)
	id := e.ctr
	e.ctr++
	e.heightTriggers[id] = &heightHandler{confidence: confidence, handle: hnd, revert: rev}
	e.htHeights[h] = append(e.htHeights[h], id)
	e.htTriggerHeights[triggerAt] = append(e.htTriggerHeights[triggerAt], id)
	return nil
}

// daemonAPI is the lotus-miner's JSON-RPC client to a daemon that is restarting.
type daemonAPI struct {
	mu   sync.Mutex
	down bool
}

func (a *daemonAPI) ChainHead(context.Context) (*TipSet, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.down {
		return nil, errors.New("RPC client error: sendRequest failed: connection refused")
	}
	return &TipSet{height: 990}, nil
}

func (a *daemonAPI) ChainGetTipSetByHeight(_ context.Context, h ChainEpoch) (*TipSet, error) {
	return &TipSet{height: h}, nil
}

func main() {
	api := &daemonAPI{down: true}
	e := &heightEvents{
		tsc: &tipSetCache{cache: make([]*TipSet, 64), storage: api}, gcConfidence: 900, ctx: context.Background(),
		heightTriggers: map[triggerID]*heightHandler{}, htTriggerHeights: map[ChainEpoch][]triggerID{}, htHeights: map[ChainEpoch][]triggerID{},
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // sealing pipeline: wait for the interactive PoRep seed epoch
		defer wg.Done()
		seed := func(ctx context.Context, ts *TipSet, curH ChainEpoch) error {
			fmt.Println("seed tipset at", ts.Height(), "head", curH)
			return nil
		}
		for attempt := 0; attempt < 2; attempt++ {
			err := e.ChainAt(seed, func(context.Context, *TipSet) error { return nil }, 5, 1000)
			if err == nil {
				return
			}
			fmt.Println("ChainAt failed, retrying:", err)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	go func() { // events listener: the daemon is back and notifies new heads
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		api.mu.Lock()
		api.down = false
		api.mu.Unlock()
		for _, h := range []ChainEpoch{990, 1005} {
			if err := e.headChangeAt(nil, []*TipSet{{height: h}}); err != nil {
				fmt.Println("head change:", err)
			}
			time.Sleep(60 * time.Millisecond)
		}
	}()
	wg.Wait()
}
