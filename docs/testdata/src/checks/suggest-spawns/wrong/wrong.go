package wrong

type Pool struct{ jobs chan func() }

func NewPool() *Pool {
	p := &Pool{jobs: make(chan func())}
	go p.work()
	return p
}

func (p *Pool) work() {
	for f := range p.jobs {
		f()
	}
}

// example:start

func (p *Pool) Submit(f func()) { p.jobs <- f } // want `Pool\.Submit: add //confined:spawns f \(rank 1 of 1\): .* \[suggest-spawns\]`

// example:end
