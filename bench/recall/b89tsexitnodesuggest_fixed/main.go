// Project: tailscale/tailscale (ipn/ipnlocal/local.go LocalBackend.WatchNotificationsAs, SuggestExitNode, suggestExitNodeLocked), v1.88 development, September 2025 (PR #17025; call site approximate).
// Bug: WatchNotificationsAs builds the initial Notify for a new IPN bus watcher while holding b.mu, and when the watcher asks for NotifyInitialSuggestedExitNode it called the exported SuggestExitNode, which locks b.mu again, so the GUI or CLI that subscribes to the bus hangs tailscaled's LocalBackend. The fix calls suggestExitNodeLocked (and tests err == nil instead of err != nil).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

type NotifyWatchOpt uint64

const (
	NotifyInitialState NotifyWatchOpt = 1 << iota
	NotifyInitialPrefs
	NotifyInitialNetMap
	NotifyInitialSuggestedExitNode
)

type StableNodeID string

type Node struct {
	StableID   StableNodeID
	Name       string
	ExitNode   bool
	DERPRegion int
}

type NetworkMap struct{ Peers []Node }

type Report struct{ RegionLatency map[int]int } // netcheck.Report, latency in ms

type ExitNodeSuggestionResponse struct {
	ID   StableNodeID
	Name string
}

type Notify struct {
	Version           string
	State             string
	NetMap            *NetworkMap
	SuggestedExitNode *StableNodeID
}

var ErrNoPreferredDERP = errors.New("no preferred DERP, try again later")

type LocalBackend struct {
	mu                    sync.Mutex // guards the fields below
	state                 string
	netMap                *NetworkMap
	lastReport            *Report
	lastSuggestedExitNode StableNodeID
	notifyWatchers        map[string]func(*Notify) bool
}

// SuggestExitNode computes a suggestion based on the current netmap and the
// latest netcheck report. It is used by the LocalAPI "suggest-exit-node".
func (b *LocalBackend) SuggestExitNode() (ExitNodeSuggestionResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.suggestExitNodeLocked()
}

// suggestExitNodeLocked is SuggestExitNode with b.mu held.
func (b *LocalBackend) suggestExitNodeLocked() (response ExitNodeSuggestionResponse, err error) {
	if b.lastReport == nil || b.netMap == nil {
		return response, ErrNoPreferredDERP
	}
	best := -1
	for _, p := range b.netMap.Peers {
		lat, ok := b.lastReport.RegionLatency[p.DERPRegion]
		if !p.ExitNode || !ok {
			continue
		}
		if best < 0 || lat < best {
			best, response = lat, ExitNodeSuggestionResponse{ID: p.StableID, Name: p.Name}
		}
	}
	b.lastSuggestedExitNode = response.ID
	return response, nil
}

// WatchNotificationsAs subscribes fn to the IPN bus, first sending the
// requested initial state.
func (b *LocalBackend) WatchNotificationsAs(ctx context.Context, sessionID string, mask NotifyWatchOpt, fn func(*Notify) bool) {
	var ini *Notify

	b.mu.Lock()
	const initialBits = NotifyInitialState | NotifyInitialPrefs | NotifyInitialNetMap | NotifyInitialSuggestedExitNode
	if mask&initialBits != 0 {
		ini = &Notify{Version: "1.88.0"}
		if mask&NotifyInitialState != 0 {
			ini.State = b.state
		}
		if mask&NotifyInitialNetMap != 0 {
			ini.NetMap = b.netMap
		}
		if mask&NotifyInitialSuggestedExitNode != 0 {
			if en, err := b.suggestExitNodeLocked(); err == nil {
				ini.SuggestedExitNode = &en.ID
			}
		}
	}
	b.notifyWatchers[sessionID] = fn
	b.mu.Unlock()

	if ini != nil && !fn(ini) {
		return
	}
	<-ctx.Done()
}

func main() {
	b := &LocalBackend{
		state: "Running",
		netMap: &NetworkMap{Peers: []Node{
			{StableID: "nExit1", Name: "fra-exit", ExitNode: true, DERPRegion: 4},
			{StableID: "nExit2", Name: "nyc-exit", ExitNode: true, DERPRegion: 1},
		}},
		lastReport:     &Report{RegionLatency: map[int]int{1: 80, 4: 12}},
		notifyWatchers: map[string]func(*Notify) bool{},
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The GUI client subscribes to the IPN bus through the LocalAPI watch-ipn-bus handler.
	b.WatchNotificationsAs(ctx, "gui-1", NotifyInitialState|NotifyInitialSuggestedExitNode, func(n *Notify) bool {
		if n.SuggestedExitNode != nil {
			fmt.Println("state", n.State, "suggested exit node", *n.SuggestedExitNode)
		}
		cancel()
		return true
	})
}
