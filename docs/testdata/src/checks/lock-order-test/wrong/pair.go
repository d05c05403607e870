package wrong

import "sync"

type Pair struct{ m, n sync.Mutex }

// example:start

func (p *Pair) Work() {
	p.m.Lock()
	defer p.m.Unlock()
	p.n.Lock() // m then n
	defer p.n.Unlock()
}

// example:end
