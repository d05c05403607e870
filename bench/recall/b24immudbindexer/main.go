// Project: codenotary/immudb (embedded/store/immustore.go, embedded/store/indexer.go)
// Bug: ImmuStore.Commit holds commitStateRWMutex (write) while it notifies the indexer,
// which takes indexer.mutex; the indexer goroutine holds indexer.mutex during
// doIndexing and reads s.LastCommittedTxID(), which takes commitStateRWMutex.RLock.
// Lock-order inversion between the committer and the indexer goroutine.
// Fix: publish the new commit state, release commitStateRWMutex, then notify the indexer.
package main

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

var ErrAlreadyClosed = errors.New("store already closed")

type TxEntry struct {
	Key   []byte
	Value []byte
}

type Tx struct {
	ID      uint64
	Ts      int64
	Entries []*TxEntry
}

func (tx *Tx) String() string { return fmt.Sprintf("tx{id=%d, entries=%d}", tx.ID, len(tx.Entries)) }

type indexer struct {
	mutex      sync.Mutex
	store      *ImmuStore
	index      map[string][]byte
	indexedTx  uint64
	pendingTx  uint64
	flushDelay time.Duration
	wakeCh     chan struct{}
	stopCh     chan struct{}
	wg         sync.WaitGroup
}

func newIndexer(st *ImmuStore, flushDelay time.Duration) *indexer {
	idx := &indexer{
		store:      st,
		index:      make(map[string][]byte),
		flushDelay: flushDelay,
		wakeCh:     make(chan struct{}, 1),
		stopCh:     make(chan struct{}),
	}
	idx.wg.Add(1)
	go idx.indexerLoop()
	return idx
}

func (idx *indexer) indexerLoop() {
	defer idx.wg.Done()
	for {
		select {
		case <-idx.stopCh:
			return
		case <-idx.wakeCh:
			if err := idx.doIndexing(); err != nil {
				log.Printf("indexer: %v", err)
			}
		}
	}
}

func (idx *indexer) Resume() {
	select {
	case idx.wakeCh <- struct{}{}:
	default:
	}
}

func (idx *indexer) doIndexing() error {
	idx.mutex.Lock()
	defer idx.mutex.Unlock()
	time.Sleep(idx.flushDelay)
	committed := idx.store.LastCommittedTxID()
	for txID := idx.indexedTx + 1; txID <= committed; txID++ {
		tx, err := idx.store.readTx(txID)
		if err != nil {
			return err
		}
		for _, e := range tx.Entries {
			idx.index[string(e.Key)] = e.Value
		}
		idx.indexedTx = txID
	}
	return nil
}

func (idx *indexer) NotifyCommit(txID uint64) {
	idx.mutex.Lock()
	defer idx.mutex.Unlock()
	if txID > idx.pendingTx {
		idx.pendingTx = txID
	}
	idx.Resume()
}

func (idx *indexer) Close() {
	close(idx.stopCh)
	idx.wg.Wait()
}

type Options struct {
	IndexFlushDelay time.Duration
	MaxTxEntries    int
}

type ImmuStore struct {
	commitStateRWMutex sync.RWMutex
	committedTxID      uint64
	txLog              []*Tx
	indexer            *indexer
	opts               Options
	closed             bool
}

func Open(opts Options) (*ImmuStore, error) {
	s := &ImmuStore{opts: opts}
	s.indexer = newIndexer(s, opts.IndexFlushDelay)
	s.indexer.Resume()
	return s, nil
}

func (s *ImmuStore) LastCommittedTxID() uint64 {
	s.commitStateRWMutex.RLock()
	defer s.commitStateRWMutex.RUnlock()
	return s.committedTxID
}

func (s *ImmuStore) readTx(txID uint64) (*Tx, error) {
	s.commitStateRWMutex.RLock()
	defer s.commitStateRWMutex.RUnlock()
	if txID == 0 || txID > uint64(len(s.txLog)) {
		return nil, fmt.Errorf("tx %d not found", txID)
	}
	return s.txLog[txID-1], nil
}

func (s *ImmuStore) Commit(entries []*TxEntry) (*Tx, error) {
	if len(entries) > s.opts.MaxTxEntries {
		return nil, fmt.Errorf("too many entries: %d", len(entries))
	}
	s.commitStateRWMutex.Lock()
	defer s.commitStateRWMutex.Unlock()
	if s.closed {
		return nil, ErrAlreadyClosed
	}
	tx := &Tx{ID: s.committedTxID + 1, Ts: time.Now().Unix(), Entries: entries}
	s.txLog = append(s.txLog, tx)
	s.committedTxID = tx.ID
	s.indexer.NotifyCommit(tx.ID)
	return tx, nil
}

func (s *ImmuStore) Close() error {
	s.commitStateRWMutex.Lock()
	if s.closed {
		s.commitStateRWMutex.Unlock()
		return ErrAlreadyClosed
	}
	s.closed = true
	s.commitStateRWMutex.Unlock()
	s.indexer.Close()
	return nil
}

func main() {
	st, err := Open(Options{IndexFlushDelay: 50 * time.Millisecond, MaxTxEntries: 1024})
	if err != nil {
		log.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	tx, err := st.Commit([]*TxEntry{{Key: []byte("user:1"), Value: []byte("alice")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("committed", tx)
	if err := st.Close(); err != nil {
		log.Fatal(err)
	}
}
