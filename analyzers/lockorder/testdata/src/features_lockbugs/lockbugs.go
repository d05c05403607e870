// Package features_lockbugs: Go-feature cases lockorder once got wrong
// (generic field names, method-expression thunks, publication by a go
// statement), kept as regression tests by TestFeatureBugs.
package features_lockbugs

import "sync"

// 1. A guarded field of a generic type is named without its type ("m"
// instead of "Cache.m").
type Cache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V //confined:guardedby mu
}

func (c *Cache[K, V]) Put(k K, v V) {
	c.m[k] = v // want `write to Cache.m without holding Cache.mu \[guardedby\]`
}

// 2. A direct call through a method expression is not seen as a call of
// the method (the SSA thunk (*Store).bump$thunk is not followed).
type Store struct {
	mu sync.Mutex
	n  int
}

func (s *Store) bump() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
}

func (s *Store) viaExpr() {
	s.mu.Lock()
	defer s.mu.Unlock()
	(*Store).bump(s) // want `Store.mu locked again by Store.bump \(at lockbugs.go:27\) while held since lockbugs.go:33: self-deadlock \[double-lock\]`
}

func (s *Store) viaExprValue() {
	f := (*Store).bump
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s) // want `Store.mu locked again by Store.bump \(at lockbugs.go:27\) while held since lockbugs.go:40: self-deadlock \[double-lock\]`
}

// 3. A fresh allocation handed to a goroutine (go c.Inc()) is published:
// later unlocked accesses are not construction.
type Counter struct {
	mu sync.Mutex
	N  int //confined:guardedby mu
}

func (c *Counter) Inc() {
	c.mu.Lock()
	c.N++
	c.mu.Unlock()
}

func published() int {
	c := new(Counter)
	go c.Inc()
	return c.N // want `read of Counter.N without holding Counter.mu \[guardedby\]`
}

// 4. A composite literal assigned to a struct variable whose address
// escapes later is built in a stack temporary and copied: construction,
// not an access (gVisor's tcp.NewProtocol). Writes after the copy are
// accesses again once the object is published.
type Options struct{ Min, Max int }

type Proto struct {
	mu   sync.Mutex
	size Options  //confined:guardedby mu
	sack bool     //confined:guardedby mu
	alg  []string //confined:guardedby mu
}

func NewProto(n int) *Proto {
	p := Proto{
		size: Options{Min: 1, Max: n},
		sack: true,
		alg:  []string{"reno", "cubic"},
	}
	return &p
}

func NewProtoPublished(n int, out chan<- *Proto) {
	p := Proto{size: Options{Max: n}}
	out <- &p
	p.sack = true // want `write to Proto.sack without holding Proto.mu \[guardedby\]`
}
