package inversion

import "sync"

type Broker struct {
	mu      sync.Mutex
	stateMu sync.Mutex
	n       int
}

// Intra-function inversion: poll takes mu then stateMu, control the reverse.
func (b *Broker) poll() {
	b.mu.Lock()
	b.stateMu.Lock()
	b.n++
	b.stateMu.Unlock()
	b.mu.Unlock()
}

func (b *Broker) control() {
	b.stateMu.Lock()
	b.mu.Lock() // want `lock order inversion: Broker.mu then Broker.stateMu in Broker.poll \(inversion.go:13 -> inversion.go:14\) but Broker.stateMu then Broker.mu in Broker.control \(inversion.go:21 -> inversion.go:22\) \[lock-order\]`
	b.n--
	b.mu.Unlock()
	b.stateMu.Unlock()
}

// Consistent order is silent.
type Pair struct {
	a, b sync.Mutex
}

func (p *Pair) one() {
	p.a.Lock()
	defer p.a.Unlock()
	p.b.Lock()
	defer p.b.Unlock()
}

func (p *Pair) two() {
	p.a.Lock()
	p.b.Lock()
	p.b.Unlock()
	p.a.Unlock()
}
