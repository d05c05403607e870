package callbacksetter

import "sync"

// ProcessFunc is a named func type: storing a func into a field of it
// converts the value (an SSA ChangeType).
type ProcessFunc func(int)

type Worker struct {
	mu      sync.Mutex
	Process ProcessFunc
}

func (w *Worker) run(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.Process(n)
}

type Ledger struct {
	mu    sync.Mutex
	w     *Worker
	total int
}

func (l *Ledger) add(n int) {
	l.mu.Lock()
	l.total += n
	l.mu.Unlock()
}

func NewLedger() *Ledger {
	l := &Ledger{}
	l.w = &Worker{Process: l.add}
	return l
}

func (l *Ledger) settle() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.run(l.total) // want `lock order inversion: Worker.mu then Ledger.mu in Worker.run \(named.go:15 -> named.go:17 via Ledger.add\) but Ledger.mu then Worker.mu in Ledger.settle \(named.go:39 -> named.go:41 via Worker.run\) \[lock-order\]`
}

// Option configures a Pool; WithEvict stores its argument through a
// closure (the functional options pattern).
type Option func(*Pool)

type Pool struct {
	mu      sync.Mutex
	onEvict func()
}

func WithEvict(f func()) Option { return func(p *Pool) { p.onEvict = f } }

func NewPool(opts ...Option) *Pool {
	p := &Pool{}
	for _, o := range opts {
		o(p)
	}
	return p
}

func (p *Pool) evict() {
	p.mu.Lock()
	p.onEvict()
	p.mu.Unlock()
}

type Cache struct {
	mu   sync.Mutex
	pool *Pool
	n    int
}

func (c *Cache) dropped() {
	c.mu.Lock()
	c.n--
	c.mu.Unlock()
}

func NewCache() *Cache {
	c := &Cache{}
	c.pool = NewPool(WithEvict(c.dropped))
	return c
}

func (c *Cache) shrink() {
	c.mu.Lock()
	c.pool.evict() // want `lock order inversion: Pool.mu then Cache.mu in Pool.evict \(named.go:64 -> named.go:65 via Cache.dropped\) but Cache.mu then Pool.mu in Cache.shrink \(named.go:88 -> named.go:89 via Pool.evict\) \[lock-order\]`
	c.mu.Unlock()
}

// A handler that takes no lock orders nothing.
type Meter struct {
	mu sync.Mutex
	w  *Worker
	n  int
}

func (m *Meter) count(n int) { m.n += n }

func NewMeter() *Meter {
	m := &Meter{}
	m.w = &Worker{Process: m.count}
	return m
}

func (m *Meter) tick() {
	m.mu.Lock()
	m.w.run(1)
	m.mu.Unlock()
}
