// Pattern: hashicorp/raft futures. Every Apply creates a logFuture whose
// embedded deferError owns `errCh: make(chan error, 1)`; the FSM loop calls
// respond() exactly once per future. Here the FSM loop responds while it
// still holds the FSM mutex, and the client goroutine that waits on the
// future reads FSM state under that same mutex once the future resolves.
//
// Why it is safe: each future's errCh has capacity 1 and respond() is called
// exactly once per future (the loop handles each request once), so the send
// made with fsm.mu held always finds a free slot.
package main

import (
	"fmt"
	"sync"
)

const futureBuf = 1

type applyFuture struct {
	cmd   string
	errCh chan error
	index uint64
}

func newApplyFuture(cmd string) *applyFuture {
	return &applyFuture{cmd: cmd, errCh: make(chan error, futureBuf)}
}

type kvFSM struct {
	mu      sync.Mutex
	data    map[string]int
	applied uint64
}

// applyLoop plays the role of raft's runFSM goroutine.
func (f *kvFSM) applyLoop(applyCh <-chan *applyFuture, done chan<- struct{}) {
	defer close(done)
	for fut := range applyCh {
		f.respond(fut)
	}
}

func (f *kvFSM) respond(fut *applyFuture) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied++
	fut.index = f.applied
	var err error
	if fut.cmd == "" {
		err = fmt.Errorf("index %d: empty command", f.applied)
	} else {
		f.data[fut.cmd]++
	}
	fut.errCh <- err // one response per future, capacity 1
}

func main() {
	fsm := &kvFSM{data: make(map[string]int)}
	applyCh := make(chan *applyFuture)
	loopDone := make(chan struct{})
	go fsm.applyLoop(applyCh, loopDone)

	cmds := []string{"set-a", "set-b", "", "set-a", "set-c", "set-a"}
	var wg sync.WaitGroup
	for _, cmd := range cmds {
		wg.Add(1)
		go func(cmd string) {
			defer wg.Done()
			fut := newApplyFuture(cmd)
			applyCh <- fut
			err := <-fut.errCh
			fsm.mu.Lock()
			count := fsm.data[cmd]
			fsm.mu.Unlock()
			if err != nil {
				fmt.Printf("apply %q failed: %v\n", cmd, err)
				return
			}
			fmt.Printf("apply %q committed, count now >= %d\n", cmd, count)
		}(cmd)
	}
	wg.Wait()
	close(applyCh)
	<-loopDone

	fsm.mu.Lock()
	fmt.Printf("applied %d entries: %v\n", fsm.applied, fsm.data)
	fsm.mu.Unlock()
}
