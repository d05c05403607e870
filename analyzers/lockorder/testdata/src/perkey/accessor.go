package perkey

import "sync"

// Striped hands a key's mutex out through an accessor that looks it up
// under mu (made on a miss; mu released by a defer): the mutex it returns
// is an element of m, as if the caller had looked it up itself.
type Striped struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (s *Striped) get(k string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.m[k]
	if !ok {
		m = &sync.Mutex{}
		s.m[k] = m
	}
	return m
}

func (s *Striped) Lock(k string)   { s.get(k).Lock() }
func (s *Striped) Unlock(k string) { s.get(k).Unlock() }

type Ledger struct {
	keys Striped
	mu   sync.Mutex
	sums map[string]int
}

// add holds the key's lock, then takes Ledger.mu.
func (l *Ledger) add(k string, v int) {
	l.keys.Lock(k)
	defer l.keys.Unlock(k)
	l.mu.Lock()
	l.sums[k] += v
	l.mu.Unlock()
}

// reset takes each key's lock under Ledger.mu.
func (l *Ledger) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.sums {
		l.keys.Lock(k) // want `lock order inversion: Striped.m\[\] then Ledger.mu in Ledger.add \(accessor.go:35 -> accessor.go:37\) but Ledger.mu then Striped.m\[\] in Ledger.reset \(accessor.go:44 -> accessor.go:47 via Striped.Lock\) \[lock-order\]`
		delete(l.sums, k)
		l.keys.Unlock(k)
	}
}

// Book is Ledger done right: the keys are copied under mu and locked
// after it is released.
type Book struct {
	keys Striped
	mu   sync.Mutex
	sums map[string]int
}

func (b *Book) add(k string, v int) {
	b.keys.Lock(k)
	defer b.keys.Unlock(k)
	b.mu.Lock()
	b.sums[k] += v
	b.mu.Unlock()
}

func (b *Book) reset() {
	b.mu.Lock()
	keys := make([]string, 0, len(b.sums))
	for k := range b.sums {
		keys = append(keys, k)
	}
	b.mu.Unlock()
	for _, k := range keys {
		b.keys.Lock(k)
		b.mu.Lock()
		delete(b.sums, k)
		b.mu.Unlock()
		b.keys.Unlock(k)
	}
}

// A getter of one plain mutex field is that field's lock, not an element.
type Holder struct {
	mu    sync.Mutex
	inner sync.Mutex
}

func (h *Holder) lockOf() *sync.Mutex { return &h.inner }

func (h *Holder) both() {
	h.mu.Lock()
	h.lockOf().Lock()
	h.lockOf().Unlock()
	h.mu.Unlock()
}

// Stripes hands out one of a fixed array's read-write locks by hash: the
// lock it returns is of the stripe's class (one of several: two stripes
// taken in turn are two locks).
type stripe struct {
	sync.RWMutex
	_ [32]byte
}

type Stripes struct {
	locks [8]stripe
}

func (s *Stripes) lockFor(ref uint64) *sync.RWMutex { return &s.locks[ref%8].RWMutex }

type Head struct {
	series Stripes
	symMu  sync.Mutex
	syms   map[uint64]int
}

// labels reads under the stripe, then takes symMu.
func (h *Head) labels(ref uint64) {
	l := h.series.lockFor(ref)
	l.RLock()
	defer l.RUnlock()
	h.symMu.Lock()
	h.syms[ref]++
	h.symMu.Unlock()
}

// gc write-locks each stripe under symMu: a held read lock blocks it.
func (h *Head) gc(refs []uint64) {
	h.symMu.Lock()
	defer h.symMu.Unlock()
	for _, ref := range refs {
		l := h.series.lockFor(ref)
		l.Lock() // want `lock order inversion: stripe.RWMutex then Head.symMu in Head.labels \(accessor.go:123 -> accessor.go:125\) but Head.symMu then stripe.RWMutex in Head.gc \(accessor.go:132 -> accessor.go:136\) \[lock-order\]`
		delete(h.syms, ref)
		l.Unlock()
	}
}

// Buckets is Striped again, for Lessor alone.
type Buckets struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (b *Buckets) get(k string) *sync.Mutex {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m[k] == nil {
		b.m[k] = &sync.Mutex{}
	}
	return b.m[k]
}

// Two containers of one type under two fields are two sets of locks:
// lease locks before mu, checkpoint locks after it. Silent.
type Lessor struct {
	mu         sync.Mutex
	leaseLocks Buckets
	ckptLocks  Buckets
	ttl        map[string]int
}

func (le *Lessor) renew(k string) {
	lk := le.leaseLocks.get(k)
	lk.Lock()
	defer lk.Unlock()
	le.mu.Lock()
	le.ttl[k] += 10
	le.mu.Unlock()
}

func (le *Lessor) checkpoint() {
	le.mu.Lock()
	defer le.mu.Unlock()
	for k := range le.ttl {
		ck := le.ckptLocks.get(k)
		ck.Lock()
		ck.Unlock()
	}
}
