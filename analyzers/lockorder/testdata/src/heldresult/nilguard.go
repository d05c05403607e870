package heldresult

import "sync"

// A Lock behind a test that its own object is not nil (`if row != nil {
// row.mu.Lock() }`) is no conditional step: with no row there is no lock
// to take. Two real conditions above it (a strict mode, a cache miss)
// then stay within the bound on conditional steps.

type Row struct {
	mu sync.Mutex
	v  int
}

type Rows struct {
	mu sync.Mutex
	m  map[string]*Row
}

// await waits for the row's writer, when there is a row.
func (r *Rows) await(k string) {
	r.mu.Lock()
	row := r.m[k]
	r.mu.Unlock()
	if row != nil {
		row.mu.Lock()
		row.mu.Unlock()
	}
}

type Index struct {
	mu     sync.Mutex
	rows   *Rows
	strict bool
	cached map[string]int
}

// resolve goes to the rows on a cache miss.
func (x *Index) resolve(k string) int {
	v, ok := x.cached[k]
	if !ok {
		x.rows.await(k)
	}
	return v
}

// check resolves in strict mode only.
func (x *Index) check(k string) {
	if x.strict {
		x.resolve(k)
	}
}

// refresh holds the index through check: Index.mu then Row.mu.
func (x *Index) refresh(k string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.check(k)
}

// write holds the row while it updates the index: Row.mu then Index.mu.
func (x *Index) write(row *Row, k string) {
	row.mu.Lock()
	defer row.mu.Unlock()
	row.v++
	x.mu.Lock() // want `lock order inversion: Index.mu then Row.mu in Index.refresh \(nilguard.go:56 -> nilguard.go:58 via Index.check -> Index.resolve -> Rows.await\) but Row.mu then Index.mu in Index.write \(nilguard.go:63 -> nilguard.go:66\) \[lock-order\]`
	x.cached[k] = row.v
	x.mu.Unlock()
}

// writeAfter lets the row go before it updates the index: silent.
func (x *Index) writeAfter(row *Row, k string) {
	row.mu.Lock()
	row.v++
	v := row.v
	row.mu.Unlock()
	x.mu.Lock()
	x.cached[k] = v
	x.mu.Unlock()
}
