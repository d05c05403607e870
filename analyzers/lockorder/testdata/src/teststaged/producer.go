package teststaged

import "sync"

// Producer is a mock whose delivery loop, started by its constructor,
// hands each input to Out while holding its lock (sarama's mock
// AsyncProducer). A test that starts the loop itself and takes the lock
// while it delivers deadlocks (testmodel's TestSubmitToWaitingWorker).
type Producer struct {
	mu     sync.Mutex
	expect int
	In     chan int
	Out    chan int
}

// NewProducer starts the delivery loop.
func NewProducer() *Producer {
	p := &Producer{In: make(chan int), Out: make(chan int)}
	go p.deliver()
	return p
}

func (p *Producer) deliver() {
	for v := range p.In {
		p.mu.Lock()
		p.expect--
		p.Out <- v
		p.mu.Unlock()
	}
}

// Expect records one more expected input.
func (p *Producer) Expect() {
	p.mu.Lock()
	p.expect++
	p.mu.Unlock()
}
