// Package features_select: a select with a lock held is reported only
// under the narrow blocking rule (the goroutine on the other end takes
// the lock too), and never when the select has a default.
package features_select

import "sync"

type Pump struct {
	mu   sync.Mutex
	work chan int
	quit chan struct{}
	n    int
}

// consume takes mu for every item it receives.
func (p *Pump) consume() {
	for {
		select {
		case v := <-p.work:
			p.mu.Lock()
			p.n += v
			p.mu.Unlock()
		case <-p.quit:
			return
		}
	}
}

func (p *Pump) Start() { go p.consume() }

func (p *Pump) Send(v int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select { // want `Pump.mu \(taken at select.go:\d+\) is held across a select; the goroutine started by the go statement, which would unblock it, also takes Pump.mu \[blocking-held\]`
	case p.work <- v:
	case <-p.quit:
	}
}

// A select with a default never blocks: silent.
func (p *Pump) TrySend(v int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case p.work <- v:
		return true
	default:
		return false
	}
}

// Sending after unlocking: silent.
func (p *Pump) SendUnlocked(v int) {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
	select {
	case p.work <- v:
	case <-p.quit:
	}
}
