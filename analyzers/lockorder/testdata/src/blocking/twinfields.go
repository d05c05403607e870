package blocking

import "sync"

// One channel kept under two names, a receive-only and a send-only view
// (go-ethereum's TypeMux subscription: readC and postC, both the channel
// made for it): the chain posts an event under its lock, and the pool's
// loop, reading the view it was given, asks the chain for its head under
// that lock before it receives again.
type muxSub struct {
	readC <-chan string
	postC chan<- string
}

func newMuxSub() *muxSub {
	c := make(chan string)
	return &muxSub{readC: c, postC: c}
}

func (s *muxSub) Chan() <-chan string { return s.readC }

type chain struct {
	mu   sync.RWMutex
	head string
	sub  *muxSub
}

func (c *chain) Head() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.head
}

func (c *chain) reorg(head string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.head = head
	c.sub.postC <- head // want `chain.mu \(taken at twinfields.go:35\) is held across a channel send; the goroutine started by the go statement, which would unblock it, also takes chain.mu \[blocking-held\]`
}

func (c *chain) poolLoop() {
	for range c.sub.Chan() {
		_ = c.Head()
	}
}

func StartChain() *chain {
	c := &chain{sub: newMuxSub()}
	go c.poolLoop()
	c.reorg("b2")
	return c
}

// Two fields given different channels are two channels: the loop reads
// the one nothing sends on under the lock. Silent.
type splitSub struct {
	readC <-chan string
	postC chan<- string
}

func newSplitSub() *splitSub {
	in, out := make(chan string), make(chan string)
	go func() {
		for v := range in {
			out <- v
		}
	}()
	return &splitSub{readC: out, postC: in}
}

type ledger struct {
	mu   sync.Mutex
	head string
	sub  *splitSub
}

func (l *ledger) Head() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head
}

func (l *ledger) post(head string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.head = head
	l.sub.postC <- head
}

func (l *ledger) loop() {
	for range l.sub.readC {
		_ = l.Head()
	}
}

func StartLedger() *ledger {
	l := &ledger{sub: newSplitSub()}
	go l.loop()
	l.post("b2")
	return l
}
