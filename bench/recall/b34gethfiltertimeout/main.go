// Project: go-ethereum (eth/filters/api.go, eth/filters/filter_system.go), geth v1.9.x
// Issue: ethereum/go-ethereum#22131 "A potential dead lock of client which result in block syncing halt", fixed by PR #22178 "eth/filters: fix potential deadlock in filter timeout loop"
// PublicFilterAPI.timeoutLoop takes api.filtersMu (line 160) and, still holding it, calls
// Unsubscribe on every expired filter (line 165). Unsubscribe must hand the subscription to the
// EventSystem's eventLoop over the unbuffered uninstall channel (line 78). But the eventLoop may be
// busy broadcasting pending-tx hashes to another, still active filter (line 119); that filter's goroutine
// has already received one batch and now waits for api.filtersMu to append it (line 189), so it never
// takes the next batch. timeoutLoop waits for eventLoop, eventLoop for the filter goroutine, and the filter
// goroutine for filtersMu held by timeoutLoop. The sleep after the uninstall send (line 80) is the
// reporter's own reproduction hook from the issue; main expires two filters (A and C), keeps B alive and feeds
// two batches of transactions while the first Unsubscribe is in that window, so the second Unsubscribe blocks.
// The fix collects the expired subscriptions under the lock and unsubscribes them after filtersMu.Unlock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Hash [4]byte

type ID string

type Type byte

const PendingTransactionsSubscription Type = 3

// subscription is the EventSystem's view of an installed filter.
type subscription struct {
	id        ID
	typ       Type
	hashes    chan []Hash
	installed chan struct{}
	err       chan error
}

// EventSystem creates subscriptions, processes events and broadcasts them to
// the subscription which match the subscription criteria.
type EventSystem struct {
	install   chan *subscription
	uninstall chan *subscription
	txsCh     chan []Hash // fed by the tx pool's NewTxsEvent feed
	nextID    int
	idMu      sync.Mutex
}

func NewEventSystem() *EventSystem {
	es := &EventSystem{
		install:   make(chan *subscription),
		uninstall: make(chan *subscription),
		txsCh:     make(chan []Hash, 4096),
	}
	go es.eventLoop()
	return es
}

// Subscription is created when the client registers itself for a particular event.
type Subscription struct {
	ID        ID
	f         *subscription
	es        *EventSystem
	unsubOnce sync.Once
}

func (sub *Subscription) Err() <-chan error { return sub.f.err }

// Unsubscribe uninstalls the subscription from the event broadcast loop.
func (sub *Subscription) Unsubscribe() {
	sub.unsubOnce.Do(func() {
	uninstallLoop:
		for {
			// write uninstall request and consume logs/hashes. This prevents
			// the eventLoop broadcast method to deadlock when writing to the
			// filter event channel while the subscription loop is waiting for
			// this method to return (and thus not reading these events).
			select {
			case sub.es.uninstall <- sub.f:
				// reproduction hook from the issue: widen the window
				time.Sleep(300 * time.Millisecond)
				break uninstallLoop
			case <-sub.f.hashes:
			}
		}
		// wait for filter to be uninstalled in work loop before returning
		<-sub.Err()
	})
}

func (es *EventSystem) subscribe(sub *subscription) *Subscription {
	es.install <- sub
	<-sub.installed
	return &Subscription{ID: sub.id, f: sub, es: es}
}

// SubscribePendingTxs creates a subscription that writes transaction hashes for
// transactions that enter the transaction pool.
func (es *EventSystem) SubscribePendingTxs(hashes chan []Hash) *Subscription {
	es.idMu.Lock()
	es.nextID++
	id := ID(fmt.Sprintf("0x%02x", es.nextID))
	es.idMu.Unlock()
	sub := &subscription{
		id:        id,
		typ:       PendingTransactionsSubscription,
		hashes:    hashes,
		installed: make(chan struct{}),
		err:       make(chan error),
	}
	return es.subscribe(sub)
}

func (es *EventSystem) eventLoop() {
	index := make(map[ID]*subscription)
	for {
		select {
		case hashes := <-es.txsCh:
			for _, f := range index {
				f.hashes <- hashes
			}
		case f := <-es.install:
			index[f.id] = f
			close(f.installed)
		case f := <-es.uninstall:
			delete(index, f.id)
			close(f.err)
		}
	}
}

// filter is a helper struct that holds meta information over the filter type
// and associated subscription in the event system.
type filter struct {
	typ      Type
	deadline *time.Timer // filter is inactive when deadline triggers
	hashes   []Hash
	s        *Subscription
}

// PublicFilterAPI offers support to create and manage filters.
type PublicFilterAPI struct {
	events    *EventSystem
	filtersMu sync.Mutex
	filters   map[ID]*filter
	timeout   time.Duration
}

func NewPublicFilterAPI(es *EventSystem, timeout time.Duration) *PublicFilterAPI {
	api := &PublicFilterAPI{events: es, filters: make(map[ID]*filter), timeout: timeout}
	go api.timeoutLoop(timeout)
	return api
}

// timeoutLoop runs every timeout and deletes filters that have not been recently used.
func (api *PublicFilterAPI) timeoutLoop(timeout time.Duration) {
	ticker := time.NewTicker(timeout)
	defer ticker.Stop()
	for {
		<-ticker.C
		api.filtersMu.Lock()
		for id, f := range api.filters {
			select {
			case <-f.deadline.C:
				delete(api.filters, id)
				f.s.Unsubscribe()
			default:
				continue
			}
		}
		api.filtersMu.Unlock()
	}
}

// NewPendingTransactionFilter creates a filter that fetches pending transaction
// hashes as transactions enter the pending state.
func (api *PublicFilterAPI) NewPendingTransactionFilter() ID {
	var (
		pendingTxs   = make(chan []Hash)
		pendingTxSub = api.events.SubscribePendingTxs(pendingTxs)
	)
	api.filtersMu.Lock()
	api.filters[pendingTxSub.ID] = &filter{typ: PendingTransactionsSubscription, deadline: time.NewTimer(api.timeout), hashes: make([]Hash, 0), s: pendingTxSub}
	api.filtersMu.Unlock()

	go func() {
		for {
			select {
			case ph := <-pendingTxs:
				api.filtersMu.Lock()
				if f, found := api.filters[pendingTxSub.ID]; found {
					f.hashes = append(f.hashes, ph...)
				}
				api.filtersMu.Unlock()
			case <-pendingTxSub.Err():
				api.filtersMu.Lock()
				delete(api.filters, pendingTxSub.ID)
				api.filtersMu.Unlock()
				return
			}
		}
	}()
	return pendingTxSub.ID
}

// GetFilterChanges returns the hashes for the filter with the given id since
// last time it was called, and resets its deadline.
func (api *PublicFilterAPI) GetFilterChanges(id ID) ([]Hash, bool) {
	api.filtersMu.Lock()
	defer api.filtersMu.Unlock()
	f, found := api.filters[id]
	if !found {
		return nil, false
	}
	if !f.deadline.Stop() {
		select {
		case <-f.deadline.C:
		default:
		}
	}
	f.deadline.Reset(api.timeout)
	hashes := f.hashes
	f.hashes = nil
	return hashes, true
}

func main() {
	es := NewEventSystem()
	api := NewPublicFilterAPI(es, 200*time.Millisecond) // ticks at 200ms, 400ms, ...

	time.Sleep(50 * time.Millisecond)
	a := api.NewPendingTransactionFilter() // expires at ~250ms
	c := api.NewPendingTransactionFilter() // expires at ~250ms
	time.Sleep(230 * time.Millisecond)
	b := api.NewPendingTransactionFilter() // expires at ~480ms: alive at the 400ms tick
	fmt.Println("filters:", a, b, c)

	// 400ms tick: timeoutLoop holds filtersMu and unsubscribes the first
	// expired filter; while it sits in the window, transactions arrive.
	time.Sleep(230 * time.Millisecond)
	es.txsCh <- []Hash{{0x01}}
	time.Sleep(60 * time.Millisecond)
	es.txsCh <- []Hash{{0x02}}

	time.Sleep(900 * time.Millisecond)
	hashes, ok := api.GetFilterChanges(b)
	fmt.Println("filter", b, "alive:", ok, "hashes:", len(hashes))
}
