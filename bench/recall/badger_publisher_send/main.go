// Project: dgraph-io/badger (publisher.go, db.go Subscribe)
// Bug: publisher.publishUpdates held p.Lock() while pushing batched updates into each
// subscriber's buffered sendCh. A subscriber whose callback failed stopped reading and called
// db.pub.deleteSubscriber(id), which needs p.Lock(); with its channel full, the publisher
// blocks in the send under the lock and the subscriber blocks on the lock.
// Upstream fix: PR #1749 "fix: avoid deadlock in publisher and subscriber" added an `active`
// flag so the publisher skips subscribers that are going away; later badger releases the lock
// before sending (sends happen outside the critical section). The fixed twin does both.
// Note: channel capacity is shrunk from 1000 to 2 to make the window easy to hit.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type KV struct{ Key, Value []byte }

type KVList struct{ Kv []*KV }

type request struct{ Entries []*KV }

type subscriber struct {
	id       uint64
	prefixes [][]byte
	sendCh   chan *KVList
}

type publisher struct {
	sync.Mutex
	pubCh       chan []*request
	subscribers map[uint64]subscriber
	nextID      uint64
}

func newPublisher() *publisher {
	return &publisher{pubCh: make(chan []*request, 1000), subscribers: make(map[uint64]subscriber)}
}

func (p *publisher) listenForUpdates(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case reqs := <-p.pubCh:
			p.publishUpdates(reqs)
		}
	}
}

func (p *publisher) publishUpdates(reqs []*request) {
	p.Lock()
	defer p.Unlock()
	batchedUpdates := make(map[uint64]*KVList)
	for _, req := range reqs {
		for _, e := range req.Entries {
			for id, s := range p.subscribers {
				for _, prefix := range s.prefixes {
					if !bytes.HasPrefix(e.Key, prefix) {
						continue
					}
					if _, ok := batchedUpdates[id]; !ok {
						batchedUpdates[id] = &KVList{}
					}
					batchedUpdates[id].Kv = append(batchedUpdates[id].Kv, e)
				}
			}
		}
	}
	for id, kvs := range batchedUpdates {
		p.subscribers[id].sendCh <- kvs // DEADLOCK HERE: full channel, reader is waiting for p.Lock
	}
}

func (p *publisher) newSubscriber(prefixes ...[]byte) (<-chan *KVList, uint64) {
	p.Lock()
	defer p.Unlock()
	ch := make(chan *KVList, 2)
	id := p.nextID
	p.nextID++
	p.subscribers[id] = subscriber{id: id, prefixes: prefixes, sendCh: ch}
	return ch, id
}

func (p *publisher) deleteSubscriber(id uint64) {
	p.Lock()
	defer p.Unlock()
	delete(p.subscribers, id)
}

func (p *publisher) sendUpdates(reqs []*request) { p.pubCh <- reqs }

type DB struct{ pub *publisher }

// Subscribe calls cb for every update matching prefixes until ctx is done or cb fails.
func (db *DB) Subscribe(ctx context.Context, cb func(*KVList) error, prefixes ...[]byte) error {
	recvCh, id := db.pub.newSubscriber(prefixes...)
	for {
		select {
		case <-ctx.Done():
			db.pub.deleteSubscriber(id)
			return ctx.Err()
		case batch := <-recvCh:
			if err := cb(batch); err != nil {
				db.pub.deleteSubscriber(id)
				return err
			}
		}
	}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := &DB{pub: newPublisher()}
	go db.pub.listenForUpdates(ctx)

	subErr := make(chan error, 1)
	go func() {
		subErr <- db.Subscribe(ctx, func(l *KVList) error {
			time.Sleep(20 * time.Millisecond) // slow consumer, e.g. an RPC to a remote watcher
			return errors.New("stream closed by client")
		}, []byte("user/"))
	}()
	time.Sleep(5 * time.Millisecond)

	for i := 0; i < 6; i++ { // writes committed by txn.Commit -> db.pub.sendUpdates
		db.pub.sendUpdates([]*request{{Entries: []*KV{{Key: []byte(fmt.Sprintf("user/%d", i))}}}})
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-subErr:
		fmt.Println("subscriber exited:", err)
	case <-time.After(time.Second):
		fmt.Println("hung: publisher and subscriber deadlocked on publisher lock")
	}
}
