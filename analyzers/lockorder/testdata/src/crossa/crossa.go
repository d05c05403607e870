// Package crossa takes its locks in one order; crossb, which imports it,
// closes the cycle.
package crossa

import "sync"

type Registry struct {
	Mu sync.Mutex
	n  int
}

var Global sync.Mutex

// Register takes Global then the registry's lock.
func Register(r *Registry) {
	Global.Lock()
	defer Global.Unlock()
	r.Mu.Lock()
	r.n++
	r.Mu.Unlock()
}

// Touch takes Global.
func Touch() {
	Global.Lock()
	Global.Unlock()
}

// Lock is a lock helper: returns with r.Mu held.
func (r *Registry) Lock() { r.Mu.Lock() }

// Account is annotated; importers are checked against its facts.
type Account struct {
	Mu      sync.RWMutex
	Balance int //confined:guardedby Mu
}

// Deposit needs the account locked.
//
//confined:requires Mu
func (a *Account) Deposit(n int) { a.Balance += n }

// Catalog and Index: Browse read-locks both, Catalog first; Put writes
// the catalog.
type Catalog struct {
	Mu    sync.RWMutex
	items []string
}

type Index struct {
	Mu   sync.RWMutex
	keys map[string]int
}

func Browse(c *Catalog, x *Index) int {
	c.Mu.RLock()
	defer c.Mu.RUnlock()
	x.Mu.RLock()
	defer x.Mu.RUnlock()
	return len(c.items) + len(x.keys)
}

func (c *Catalog) Put(s string) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.items = append(c.items, s)
}
