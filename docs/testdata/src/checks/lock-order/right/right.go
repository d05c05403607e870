package right

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
	b.a.mu.Lock() // A.mu then B.mu here too
	defer b.a.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
}

// example:end
