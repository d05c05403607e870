// Project: nomad (nomad/blocked_evals.go, nomad/eval_broker.go)
// Bug: BlockedEvals.Unblock held BlockedEvals.l while calling evalBroker.EnqueueAll,
// which takes EvalBroker.l. On the broker side, Ack of an eval whose plan was only
// partially placed held EvalBroker.l and handed the follow-up eval to BlockedEvals.Block,
// which takes BlockedEvals.l. Concurrent Unblock (node update) and Ack form an AB-BA cycle.
// Upstream fix: Unblock no longer calls into the broker under b.l; it pushes capacity
// changes onto capacityChangeCh and a separate watchCapacity/unblock goroutine enqueues
// into the broker with no BlockedEvals lock held. Ordering details approximated.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Evaluation struct {
	ID               string
	JobID            string
	ClassEligibility map[string]bool
	Status           string
	Blocked          *Evaluation // follow-up eval produced by a partial placement
}

type EvalBroker struct {
	l       sync.Mutex
	enabled bool
	ready   []*Evaluation
	unack   map[string]*Evaluation
	blocked *BlockedEvals
}

type capacityUpdate struct {
	computedClass string
	index         uint64
}

type BlockedEvals struct {
	l       sync.Mutex
	enabled bool
	// capacityChangeCh decouples Unblock from the broker's lock.
	capacityChangeCh chan *capacityUpdate
	evalBroker       *EvalBroker
	captured         map[string]*Evaluation
	unblockIdx       map[string]uint64
}

func (b *EvalBroker) EnqueueAll(evals []*Evaluation) {
	b.l.Lock()
	defer b.l.Unlock()
	for _, e := range evals {
		b.ready = append(b.ready, e)
	}
}

func (b *EvalBroker) Dequeue() *Evaluation {
	b.l.Lock()
	defer b.l.Unlock()
	if len(b.ready) == 0 {
		return nil
	}
	e := b.ready[0]
	b.ready = b.ready[1:]
	b.unack[e.ID] = e
	return e
}

// Ack acknowledges an eval; a follow-up blocked eval is handed to BlockedEvals.
func (b *EvalBroker) Ack(evalID string) error {
	b.l.Lock()
	defer b.l.Unlock()
	e, ok := b.unack[evalID]
	if !ok {
		return fmt.Errorf("evaluation ID %s not found", evalID)
	}
	delete(b.unack, evalID)
	if e.Blocked != nil {
		time.Sleep(5 * time.Millisecond) // raft apply of the blocked eval
		b.blocked.Block(e.Blocked)
	}
	return nil
}

func (b *BlockedEvals) Block(e *Evaluation) {
	b.l.Lock()
	defer b.l.Unlock()
	if !b.enabled {
		return
	}
	b.captured[e.ID] = e
}

// Unblock is called when node capacity for computedClass changes. It only queues
// the update; watchCapacity does the work.
func (b *BlockedEvals) Unblock(computedClass string, index uint64) {
	b.l.Lock()
	if !b.enabled {
		b.l.Unlock()
		return
	}
	b.unblockIdx[computedClass] = index
	b.l.Unlock()
	b.capacityChangeCh <- &capacityUpdate{computedClass: computedClass, index: index}
}

func (b *BlockedEvals) watchCapacity(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case u := <-b.capacityChangeCh:
			b.unblock(u.computedClass)
		}
	}
}

func (b *BlockedEvals) unblock(computedClass string) {
	b.l.Lock()
	var unblocked []*Evaluation
	for id, e := range b.captured {
		if elig, ok := e.ClassEligibility[computedClass]; !ok || elig {
			unblocked = append(unblocked, e)
			delete(b.captured, id)
		}
	}
	b.l.Unlock()
	time.Sleep(5 * time.Millisecond) // building the unblock batch
	if len(unblocked) > 0 {
		b.evalBroker.EnqueueAll(unblocked)
	}
}

func main() {
	broker := &EvalBroker{enabled: true, unack: map[string]*Evaluation{}}
	blocked := &BlockedEvals{enabled: true, evalBroker: broker,
		captured: map[string]*Evaluation{}, unblockIdx: map[string]uint64{},
		capacityChangeCh: make(chan *capacityUpdate, 64)}
	broker.blocked = blocked
	done := make(chan struct{})
	defer close(done)
	go blocked.watchCapacity(done)

	blocked.Block(&Evaluation{ID: "e0", JobID: "web", ClassEligibility: map[string]bool{"v1:123": true}})
	broker.EnqueueAll([]*Evaluation{{ID: "e1", JobID: "api",
		Blocked: &Evaluation{ID: "e1-blocked", JobID: "api"}}})
	e := broker.Dequeue()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = broker.Ack(e.ID) }()           // worker finishing
	go func() { defer wg.Done(); blocked.Unblock("v1:123", 100) }() // node update
	wg.Wait()
	time.Sleep(20 * time.Millisecond) // let watchCapacity drain
	broker.l.Lock()
	nReady := len(broker.ready)
	broker.l.Unlock()
	blocked.l.Lock()
	nBlocked := len(blocked.captured)
	blocked.l.Unlock()
	fmt.Println("ready:", nReady, "blocked:", nBlocked)
}
