// Project: lightningnetwork/lnd (channeldb/graph.go ChannelGraph.FilterKnownChanIDs/MarkEdgeLive/DeleteChannelEdges, discovery/syncer.go), v0.18 development, January 2024 (issue #8398; fix reconstructed, approximate).
// Bug: when a ReplyChannelRange arrives, FilterKnownChanIDs opens a read-write bbolt transaction (the database writer lock) and, for a zombie channel whose new update timestamps revive it, marks the edge live from inside that transaction, which takes the graph's cacheMu. DeleteChannelEdges, run by the router's zombie pruning, holds cacheMu while it waits for the writer lock, so the gossip syncer and the router deadlock AB-BA (fix: take cacheMu before the transaction and use the lock-free markEdgeLiveUnsafe inside it).
package main

import (
	"fmt"
	"sync"
	"time"
)

// DB stands for kvdb on top of bbolt: a read-write transaction holds the
// database writer lock (bbolt's db.rwlock) from begin until commit.
type DB struct {
	rwlock  sync.Mutex
	edges   map[uint64]bool
	zombies map[uint64]bool
}

type RwTx struct{ db *DB }

func (db *DB) Update(f func(tx *RwTx) error) error {
	db.rwlock.Lock()
	defer db.rwlock.Unlock()
	return f(&RwTx{db: db})
}

type rejectCache struct{ entries map[uint64]struct{} }

func (c *rejectCache) remove(id uint64) { delete(c.entries, id) }

type ChannelUpdateInfo struct {
	ShortChannelID       uint64
	Node1UpdateTimestamp time.Time
	Node2UpdateTimestamp time.Time
}

type ChannelGraph struct {
	db          *DB
	cacheMu     sync.RWMutex
	rejectCache *rejectCache
	chanCache   *rejectCache
}

// FilterKnownChanIDs returns the channel IDs we do not know yet and revives
// zombies whose latest update timestamps are recent enough.
func (c *ChannelGraph) FilterKnownChanIDs(chansInfo []ChannelUpdateInfo,
	isZombieChan func(time.Time, time.Time) bool) ([]uint64, error) {

	var newChanIDs []uint64

	c.cacheMu.Lock()
	defer c.cacheMu.Unlock()

	err := c.db.Update(func(tx *RwTx) error {
		time.Sleep(50 * time.Millisecond) // walk the edge index
		for _, info := range chansInfo {
			scid := info.ShortChannelID
			if tx.db.edges[scid] {
				continue
			}
			if tx.db.zombies[scid] {
				if isZombieChan(info.Node1UpdateTimestamp, info.Node2UpdateTimestamp) {
					continue
				}
				if err := c.markEdgeLiveUnsafe(tx, scid); err != nil {
					return err
				}
			}
			newChanIDs = append(newChanIDs, scid)
		}
		return nil
	})
	return newChanIDs, err
}

// markEdgeLiveUnsafe clears an edge from the zombie index using the passed
// transaction, or a new one if tx is nil.
//
// NOTE: this method MUST only be called if the cacheMu has already been
// acquired.
func (c *ChannelGraph) markEdgeLiveUnsafe(tx *RwTx, chanID uint64) error {
	dbFn := func(tx *RwTx) error {
		delete(tx.db.zombies, chanID)
		return nil
	}
	var err error
	if tx == nil {
		err = c.db.Update(dbFn)
	} else {
		err = dbFn(tx)
	}
	if err != nil {
		return err
	}
	c.rejectCache.remove(chanID)
	c.chanCache.remove(chanID)
	return nil
}

// MarkEdgeLive is the exported entry point used by the gossiper.
func (c *ChannelGraph) MarkEdgeLive(chanID uint64) error {
	c.cacheMu.Lock()
	defer c.cacheMu.Unlock()

	return c.markEdgeLiveUnsafe(nil, chanID)
}

// DeleteChannelEdges removes edges (optionally marking them zombies).
func (c *ChannelGraph) DeleteChannelEdges(markZombie bool, chanIDs ...uint64) error {
	c.cacheMu.Lock()
	defer c.cacheMu.Unlock()

	err := c.db.Update(func(tx *RwTx) error {
		for _, id := range chanIDs {
			delete(tx.db.edges, id)
			if markZombie {
				tx.db.zombies[id] = true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range chanIDs {
		c.rejectCache.remove(id)
		c.chanCache.remove(id)
	}
	return nil
}

func main() {
	db := &DB{edges: map[uint64]bool{1: true, 2: true}, zombies: map[uint64]bool{7: true}}
	graph := &ChannelGraph{db: db, rejectCache: &rejectCache{map[uint64]struct{}{}},
		chanCache: &rejectCache{map[uint64]struct{}{}}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // discovery: gossipSyncer.processChanRangeReply
		defer wg.Done()
		now := time.Now()
		reply := []ChannelUpdateInfo{{ShortChannelID: 2}, {ShortChannelID: 7,
			Node1UpdateTimestamp: now, Node2UpdateTimestamp: now}}
		isZombie := func(t1, t2 time.Time) bool { return time.Since(t1) > 14*24*time.Hour }
		ids, err := graph.FilterKnownChanIDs(reply, isZombie)
		fmt.Println("query peer for", ids, err)
	}()
	go func() { // routing: ChannelRouter.pruneZombieChans
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		fmt.Println("prune zombies:", graph.DeleteChannelEdges(true, 1))
	}()
	wg.Wait()
}
