// Project: nats-io/nats-server v2.9.14 (clustered JetStream).
// Files/functions: server/jetstream_cluster.go (jetStream.checkForOrphans, jsAccount.consumerAssigned,
// jetStreamCluster.isConsumerAssigned, jetStream.isClustered), server/consumer.go (consumer.delete,
// consumer.stopWithFlags), server/stream.go (stream.getConsumers).
// PR nats-io/nats-server#3945 "[FIXED] Do not hold jetstream lock cleaning up orphans, could
// deadlock." (March 2023, shipped in v2.9.15).
//
// After the meta layer recovers on startup, checkForOrphans looks for streams and consumers that
// were recovered from disk but no longer have an assignment in the meta layer and deletes them.
// It held the jetStream write lock for the whole walk and called o.delete() on each orphaned
// consumer while still holding it. consumer.delete is stopWithFlags(dflag=true, ...), which in
// clustered mode first asks whether the consumer is still assigned: it looks up the account's
// jsAccount and calls jsa.consumerAssigned, which read-locks the jetStream to consult the
// cluster's assignments. The goroutine already holds the jetStream write lock, so the server's
// JetStream layer wedges on the first orphaned consumer. The fix collects the orphaned streams
// and consumers under the lock, releases it, and only then deletes them.
package main

import (
	"fmt"
	"sync"
)

type Server struct{ name string }

func (s *Server) Warnf(format string, v ...any) { fmt.Printf("[WRN] "+format+"\n", v...) }

type Account struct {
	mu   sync.RWMutex
	Name string
	js   *jsAccount
}

type consumerAssignment struct{ Name, Stream string }
type streamAssignment struct {
	consumers map[string]*consumerAssignment
}

// jetStreamCluster.streams maps account -> stream -> assignment.
type jetStreamCluster struct {
	streams map[string]map[string]*streamAssignment
}

// Read lock should be held.
func (cc *jetStreamCluster) isConsumerAssigned(a *Account, stream, consumer string) bool {
	if cc == nil {
		return true
	}
	sa := cc.streams[a.Name][stream]
	return sa != nil && sa.consumers[consumer] != nil
}

type jetStream struct {
	mu       sync.RWMutex
	srv      *Server
	cluster  *jetStreamCluster
	accounts map[string]*jsAccount
}

// isClustered returns if we are clustered. This is only ever set, no need for lock here.
func (js *jetStream) isClustered() bool { return js.cluster != nil }

type jsAccount struct {
	mu      sync.RWMutex
	js      *jetStream
	account *Account
	streams map[string]*stream
}

// consumerAssigned informs us if this server has this consumer assigned.
func (jsa *jsAccount) consumerAssigned(stream, consumer string) bool {
	jsa.mu.RLock()
	js, acc := jsa.js, jsa.account
	jsa.mu.RUnlock()
	if js == nil {
		return false
	}
	js.mu.RLock()
	defer js.mu.RUnlock()
	return js.cluster.isConsumerAssigned(acc, stream, consumer)
}

type stream struct {
	mu        sync.RWMutex
	name      string
	consumers map[string]*consumer
}

func (mset *stream) getConsumers() []*consumer {
	mset.mu.RLock()
	defer mset.mu.RUnlock()
	obs := make([]*consumer, 0, len(mset.consumers))
	for _, o := range mset.consumers {
		obs = append(obs, o)
	}
	return obs
}

type consumer struct {
	mu           sync.RWMutex
	name, stream string
	acc          *Account
	js           *jetStream
	mset         *stream
	closed       bool
}

func (o *consumer) delete() error { return o.stopWithFlags(true, false, true, true) }

func (o *consumer) stopWithFlags(dflag, sdflag, doSignal, advisory bool) error {
	var isAssigned bool
	if dflag {
		o.mu.RLock()
		acc, stream, consumer := o.acc, o.stream, o.name
		isClustered := o.js != nil && o.js.isClustered()
		o.mu.RUnlock()
		if isClustered {
			var jsa *jsAccount
			if acc != nil {
				acc.mu.RLock()
				jsa = acc.js
				acc.mu.RUnlock()
			}
			if jsa != nil {
				isAssigned = jsa.consumerAssigned(stream, consumer)
			}
		}
	}
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	o.closed = true
	mset := o.mset
	o.mset = nil
	o.mu.Unlock()
	if mset != nil {
		mset.mu.Lock()
		delete(mset.consumers, o.name)
		mset.mu.Unlock()
	}
	fmt.Printf("consumer %q stopped (still assigned: %v)\n", o.name, isAssigned)
	return nil
}

// Called after recovery of the cluster on startup to check for any orphans.
func (js *jetStream) checkForOrphans() {
	consumerName := func(o *consumer) string {
		o.mu.RLock()
		defer o.mu.RUnlock()
		return o.name
	}

	js.mu.Lock()
	defer js.mu.Unlock()
	s, cc := js.srv, js.cluster

	for accName, jsa := range js.accounts {
		asa := cc.streams[accName]
		for stream, mset := range jsa.streams {
			if sa := asa[stream]; sa == nil {
				s.Warnf("Detected orphaned stream '%s > %s', will cleanup", accName, stream)
			} else {
				// This one is good, check consumers now.
				for _, o := range mset.getConsumers() {
					consumer := consumerName(o)
					if sa.consumers[consumer] == nil {
						s.Warnf("Detected orphaned consumer '%s > %s > %s', will cleanup", accName, stream, consumer)
						o.delete()
					}
				}
			}
		}
	}
}

func main() {
	acc := &Account{Name: "ACME"}
	js := &jetStream{srv: &Server{name: "n2"}, accounts: map[string]*jsAccount{}}
	acc.js = &jsAccount{js: js, account: acc, streams: map[string]*stream{}}
	js.accounts[acc.Name] = acc.js

	mset := &stream{name: "ORDERS", consumers: map[string]*consumer{}}
	acc.js.streams[mset.name] = mset
	// "ship" is still assigned; "audit" was deleted on the meta layer while this server was down.
	for _, name := range []string{"ship", "audit"} {
		mset.consumers[name] = &consumer{name: name, stream: "ORDERS", acc: acc, js: js, mset: mset}
	}
	js.cluster = &jetStreamCluster{streams: map[string]map[string]*streamAssignment{
		"ACME": {"ORDERS": {consumers: map[string]*consumerAssignment{"ship": {Name: "ship", Stream: "ORDERS"}}}},
	}}

	js.checkForOrphans()
	fmt.Println("orphan check done, consumers left:", len(mset.getConsumers()))
}
