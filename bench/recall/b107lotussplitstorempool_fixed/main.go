// Project: filecoin-project/lotus (blockstore/splitstore/splitstore.go, blockstore/splitstore/splitstore_compact.go, chain/messagepool/messagepool.go, node/modules/chain.go), v1.19 to v1.21, December 2022 to May 2023.
// Bug: compaction holds SplitStore.mx in applyProtectors while it runs the protectors registered with AddProtector, and the message pool's protector, MessagePool.ForEachPendingMessage, takes mp.lk; MessagePool.HeadChange holds mp.lk while it loads the messages of reverted blocks through the chain store, and a read that misses the hot store calls SplitStore.isWarm, which takes SplitStore.mx. Compaction and the mpool head change deadlock AB-BA (issue #9846; PR #9903 first made the protector bail out, PR #10840 fixed it by reading warmupEpoch atomically instead of under s.mx).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type Cid string // github.com/ipfs/go-cid

var ErrNotFound = errors.New("ipld: could not find node")

type Blockstore interface {
	Get(ctx context.Context, c Cid) ([]byte, error)
}

type memBlockstore map[Cid][]byte

func (m memBlockstore) Get(_ context.Context, c Cid) ([]byte, error) {
	if b, ok := m[c]; ok {
		return b, nil
	}
	return nil, ErrNotFound
}

// SplitStore is the hot/cold blockstore of blockstore/splitstore.
type SplitStore struct {
	mx          sync.Mutex
	warmupEpoch atomic.Int64 // read without s.mx (PR #10840)
	protectors  []func(func(Cid) error) error

	hot, cold Blockstore

	txnActive bool // set under txnLk by beginTxnProtect (elided)
	txnRefsMx sync.Mutex
	txnRefs   map[Cid]struct{}
}

func (s *SplitStore) AddProtector(protector func(func(Cid) error) error) {
	s.mx.Lock()
	defer s.mx.Unlock()
	s.protectors = append(s.protectors, protector)
}

func (s *SplitStore) isWarm() bool {
	return s.warmupEpoch.Load() > 0
}

func (s *SplitStore) Get(ctx context.Context, c Cid) ([]byte, error) {
	blk, err := s.hot.Get(ctx, c)
	if errors.Is(err, ErrNotFound) {
		if s.isWarm() {
			logReadMiss(c) // s.debug.LogReadMiss
		}
		return s.cold.Get(ctx, c)
	}
	return blk, err
}

func logReadMiss(Cid) {}

// trackTxnRef transactionally protects a reference to an object.
func (s *SplitStore) trackTxnRef(c Cid) {
	if !s.txnActive {
		return
	}
	s.txnRefsMx.Lock()
	s.txnRefs[c] = struct{}{}
	s.txnRefsMx.Unlock()
}

func (s *SplitStore) applyProtectors() error {
	s.mx.Lock()
	defer s.mx.Unlock()

	count := 0
	for _, protect := range s.protectors {
		err := protect(func(c Cid) error {
			s.trackTxnRef(c)
			count++
			return nil
		})
		if err != nil {
			return fmt.Errorf("error applying protector: %w", err)
		}
	}
	fmt.Printf("protected %d references through %d protectors\n", count, len(s.protectors))
	return nil
}

func (s *SplitStore) doCompact() error {
	// 0. track all protected references at beginning of compaction
	if err := s.applyProtectors(); err != nil {
		return err
	}
	// 1. mark reachable objects by walking the chain (elided)
	return nil
}

// --- chain/messagepool ---

type SignedMessage struct {
	From  string
	Nonce uint64
}

func (m *SignedMessage) Cid() Cid { return Cid(fmt.Sprintf("msg-%s-%d", m.From, m.Nonce)) }

type BlockHeader struct{ Messages Cid }

type TipSet struct{ Blocks []*BlockHeader }

// Provider is the message pool's view of the chain (chain/messagepool/provider.go).
type Provider interface {
	MessagesForBlock(context.Context, *BlockHeader) ([]*SignedMessage, error)
}

// ChainStore reads chain objects through the splitstore.
type ChainStore struct{ bs Blockstore }

func (cs *ChainStore) MessagesForBlock(ctx context.Context, b *BlockHeader) ([]*SignedMessage, error) {
	meta, err := cs.bs.Get(ctx, b.Messages)
	if err != nil {
		return nil, fmt.Errorf("loading msgmeta %s: %w", b.Messages, err)
	}
	m := &SignedMessage{}
	_, err = fmt.Sscanf(string(meta), "%s %d", &m.From, &m.Nonce)
	return []*SignedMessage{m}, err
}

type MessagePool struct {
	lk      sync.Mutex
	curTsLk sync.Mutex // taken before lk
	curTs   *TipSet
	api     Provider
	pending map[string]map[uint64]*SignedMessage
}

func (mp *MessagePool) addLocked(m *SignedMessage) {
	if mp.pending[m.From] == nil {
		mp.pending[m.From] = make(map[uint64]*SignedMessage)
	}
	mp.pending[m.From][m.Nonce] = m
}

// ForEachPendingMessage is registered as a splitstore protector.
func (mp *MessagePool) ForEachPendingMessage(f func(Cid) error) error {
	mp.lk.Lock()
	defer mp.lk.Unlock()
	for _, mset := range mp.pending {
		for _, m := range mset {
			if err := f(m.Cid()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (mp *MessagePool) HeadChange(ctx context.Context, revert, apply []*TipSet) error {
	mp.curTsLk.Lock()
	defer mp.curTsLk.Unlock()
	mp.lk.Lock()
	defer mp.lk.Unlock()

	for _, ts := range revert {
		for _, b := range ts.Blocks {
			msgs, err := mp.api.MessagesForBlock(ctx, b)
			if err != nil {
				return fmt.Errorf("failed to get messages for revert block: %w", err)
			}
			for _, m := range msgs {
				mp.addLocked(m) // re-add reverted messages
			}
		}
	}
	mp.curTs = apply[len(apply)-1]
	return nil
}

// --- scenario ---

// slowProvider signals that HeadChange is loading reverted blocks (mp.lk held)
// and delays that lookup as a cold disk read would.
type slowProvider struct {
	Provider
	loading chan struct{}
}

func (p *slowProvider) MessagesForBlock(ctx context.Context, h *BlockHeader) ([]*SignedMessage, error) {
	close(p.loading)
	time.Sleep(100 * time.Millisecond)
	return p.Provider.MessagesForBlock(ctx, h)
}

func main() {
	ctx := context.Background()
	// The reverted block's messages were moved to the coldstore by an earlier compaction.
	hot, cold := memBlockstore{}, memBlockstore{"msgmeta-990": []byte("f1alice 7")}
	ss := &SplitStore{hot: hot, cold: cold, txnActive: true, txnRefs: map[Cid]struct{}{}}
	ss.warmupEpoch.Store(1000) // hotstore warmed up at startup

	prov := &slowProvider{Provider: &ChainStore{bs: ss}, loading: make(chan struct{})}
	mp := &MessagePool{api: prov, pending: make(map[string]map[uint64]*SignedMessage)}
	mp.addLocked(&SignedMessage{From: "f1carol", Nonce: 0})

	// node/modules/chain.go: the splitstore protects pending mpool messages.
	ss.AddProtector(mp.ForEachPendingMessage)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // chain notifee: a reorg reverts the tipset at height 990
		defer wg.Done()
		err := mp.HeadChange(ctx,
			[]*TipSet{{Blocks: []*BlockHeader{{Messages: "msgmeta-990"}}}},
			[]*TipSet{{Blocks: []*BlockHeader{{Messages: "msgmeta-990b"}}}})
		fmt.Println("mpool head change done, err:", err)
	}()
	go func() { // compaction goroutine started by SplitStore.HeadChange
		defer wg.Done()
		<-prov.loading
		if err := ss.doCompact(); err != nil {
			fmt.Println("COMPACTION ERROR:", err)
		}
	}()
	wg.Wait()
	fmt.Println("ok")
}
