// Pattern: hashicorp/raft Apply + applyCh + future: a fixed pool of clients
// each proposes a command under the FSM client lock (which assigns the
// proposal sequence) and then waits on the returned future outside the
// lock. The apply loop locks the same mutex to update FSM state before
// responding to the future. Each client has at most one outstanding
// proposal and applyCh is sized to the number of clients, so the send under
// the lock always finds a free slot.
package main

import (
	"fmt"
	"sync"
)

const numClients = 6

type logFuture struct {
	seq   uint64
	key   string
	delta int
	resp  chan int
}

type kvFSM struct {
	mu      sync.Mutex
	nextSeq uint64
	applied uint64
	data    map[string]int
	applyCh chan *logFuture
}

func newFSM() *kvFSM {
	return &kvFSM{data: make(map[string]int), applyCh: make(chan *logFuture, numClients)}
}

// Apply proposes a command; the caller must wait on the future before the
// next Apply.
func (f *kvFSM) Apply(key string, delta int) *logFuture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextSeq++
	fut := &logFuture{seq: f.nextSeq, key: key, delta: delta, resp: make(chan int, 1)}
	f.applyCh <- fut
	return fut
}

func (f *kvFSM) runFSM(done chan<- struct{}) {
	defer close(done)
	for fut := range f.applyCh {
		f.mu.Lock()
		f.data[fut.key] += fut.delta
		v := f.data[fut.key]
		if fut.seq > f.applied {
			f.applied = fut.seq
		}
		f.mu.Unlock()
		fut.resp <- v
	}
}

func main() {
	fsm := newFSM()
	done := make(chan struct{})
	go fsm.runFSM(done)

	var clients sync.WaitGroup
	for c := 0; c < numClients; c++ {
		clients.Add(1)
		go func(c int) {
			defer clients.Done()
			key := fmt.Sprintf("counter/%d", c%3)
			for i := 0; i < 500; i++ {
				fut := fsm.Apply(key, 1)
				if v := <-fut.resp; v <= 0 {
					panic("lost update")
				}
			}
		}(c)
	}
	clients.Wait()
	close(fsm.applyCh)
	<-done

	fsm.mu.Lock()
	fmt.Printf("applied=%d data=%v\n", fsm.applied, fsm.data)
	fsm.mu.Unlock()
}
