package wrong

import "sync"

type A struct {
	mu sync.Mutex
	b  *B
}

type B struct {
	mu sync.Mutex
	a  *A
}

// example:start

func (a *A) f() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.b.mu.Lock() // A.mu then B.mu
	defer a.b.mu.Unlock()
}

func (b *B) g() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.a.mu.Lock() // want `lock order inversion: .*\[lock-order\]`
	defer b.a.mu.Unlock()
}

// example:end
