// Package looprelock: a lock still held when the loop comes round is
// taken again on the next iteration, whether the Lock is direct or in a
// helper.
package looprelock

import "sync"

type Pump struct {
	mu sync.Mutex
	n  int
}

func (p *Pump) lock()   { p.mu.Lock() }
func (p *Pump) unlock() { p.mu.Unlock() }

// run continues with the lock held on negative items.
func (p *Pump) run(items []int) {
	for _, it := range items {
		p.lock() // want `Pump.mu may still be held from the previous loop iteration`
		if it < 0 {
			continue
		}
		p.n += it
		p.unlock()
	}
}

// runDirect locks directly and unlocks through the helper.
func (p *Pump) runDirect(items []int) {
	for _, it := range items {
		p.mu.Lock() // want `Pump.mu may still be held from the previous loop iteration`
		if it < 0 {
			continue
		}
		p.n += it
		p.unlock()
	}
}

// runOK releases before continuing. Silent.
func (p *Pump) runOK(items []int) {
	for _, it := range items {
		p.lock()
		if it < 0 {
			p.unlock()
			continue
		}
		p.n += it
		p.unlock()
	}
}

var _ = []any{(*Pump).run, (*Pump).runDirect, (*Pump).runOK}
