// Modelled on hashicorp/raft's Transport / AppendPipeline: the leader holds
// r.mu while replicating a new entry to each peer's transport. The in-memory
// transport returns immediately; the pipelined transport blocks on a
// sync.Cond while too many RPCs are in flight. In-flight RPCs are completed
// by the transport's own responder goroutine, which only takes the
// transport's mutex (never r.mu), so the wait always ends.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type AppendEntriesRequest struct {
	Term, Index uint64
}

type Transport interface {
	AppendEntries(req AppendEntriesRequest) error
	MatchIndex() uint64
}

type inmemTransport struct {
	mu    sync.Mutex
	match uint64
}

func (t *inmemTransport) AppendEntries(req AppendEntriesRequest) error {
	t.mu.Lock()
	t.match = req.Index
	t.mu.Unlock()
	return nil
}
func (t *inmemTransport) MatchIndex() uint64 { t.mu.Lock(); defer t.mu.Unlock(); return t.match }

type pipelineTransport struct {
	mu                sync.Mutex
	notFull, notEmpty *sync.Cond
	queue             []AppendEntriesRequest
	inflight, max     int
	match             uint64
	shutdown          bool
	done              chan struct{}
}

func newPipelineTransport(maxInflight int) *pipelineTransport {
	t := &pipelineTransport{max: maxInflight, done: make(chan struct{})}
	t.notFull, t.notEmpty = sync.NewCond(&t.mu), sync.NewCond(&t.mu)
	go t.responder()
	return t
}

func (t *pipelineTransport) AppendEntries(req AppendEntriesRequest) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.inflight >= t.max && !t.shutdown {
		t.notFull.Wait() // signalled by responder, which needs only t.mu
	}
	if t.shutdown {
		return errors.New("pipeline shutdown")
	}
	t.inflight++
	t.queue = append(t.queue, req)
	t.notEmpty.Signal()
	return nil
}

func (t *pipelineTransport) responder() {
	defer close(t.done)
	for {
		t.mu.Lock()
		for len(t.queue) == 0 && !t.shutdown {
			t.notEmpty.Wait()
		}
		if len(t.queue) == 0 {
			t.mu.Unlock()
			return
		}
		req := t.queue[0]
		t.queue = t.queue[1:]
		t.mu.Unlock()
		time.Sleep(20 * time.Microsecond) // RPC round trip
		t.mu.Lock()
		t.inflight--
		t.match = req.Index
		t.notFull.Signal()
		t.mu.Unlock()
	}
}

func (t *pipelineTransport) MatchIndex() uint64 { t.mu.Lock(); defer t.mu.Unlock(); return t.match }

func (t *pipelineTransport) Close() {
	t.mu.Lock()
	t.shutdown = true
	t.notFull.Broadcast()
	t.notEmpty.Broadcast()
	t.mu.Unlock()
	<-t.done
}

type Raft struct {
	mu        sync.Mutex
	term      uint64
	lastIndex uint64
	peers     []Transport
}

func (r *Raft) Apply() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastIndex++
	req := AppendEntriesRequest{Term: r.term, Index: r.lastIndex}
	for _, p := range r.peers {
		if err := p.AppendEntries(req); err != nil { // may wait on a Cond
			fmt.Println("replicate:", err)
		}
	}
}

func main() {
	pipe := newPipelineTransport(2)
	r := &Raft{term: 1, peers: []Transport{&inmemTransport{}, pipe}}
	var wg sync.WaitGroup
	for c := 0; c < 5; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				r.Apply()
			}
		}()
	}
	wg.Wait()
	pipe.Close()
	r.mu.Lock()
	fmt.Println("last:", r.lastIndex, "inmem match:", r.peers[0].MatchIndex(), "pipe match:", pipe.MatchIndex())
	r.mu.Unlock()
}
