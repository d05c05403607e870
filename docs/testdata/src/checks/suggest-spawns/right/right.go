package right

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

//confined:spawns f
func (p *Pool) Submit(f func()) { p.jobs <- f }

// example:end
