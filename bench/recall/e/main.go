package main

import "sync"

type pool struct {
	mu      sync.Mutex
	wg      sync.WaitGroup
	results []int
}

func (p *pool) run(n int) {
	for i := 0; i < n; i++ {
		p.wg.Add(1)
		go func(i int) {
			defer p.wg.Done()
			p.mu.Lock()
			p.results = append(p.results, i)
			p.mu.Unlock()
		}(i)
	}
}

func (p *pool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wg.Wait()
}

func main() {
	p := &pool{}
	p.run(3)
	p.stop()
}
