// Package features_generics: role-confined state in generic types and
// generic functions.
package features_generics

import "github.com/confinelint/confinelint/confine"

// Queue is confined to control whatever its element type.
type Queue[T any] struct {
	owner confine.Owner
	items []T //confined:control
	in    chan T
}

//confined:entry
func (q *Queue[T]) run() {
	q.owner.Bind()
	for v := range q.in {
		q.push(v) // silent: on control
	}
	go func() {
		q.items = nil // want `q.items is confined to control but written on the goroutine started by the go statement`
	}()
	go q.peek() // the go statement makes peek a root of its own
}

func (q *Queue[T]) push(v T) { q.items = append(q.items, v) }

func (q *Queue[T]) peek() {
	_ = len(q.items) // want `q.items is confined to control but read on the goroutine started by the go statement`
}

// A generic helper that takes the state by parameter is not itself
// confined: values copied out of owned state are not owned.
func sum[N int | int64](xs []N) (s N) {
	for _, x := range xs {
		s += x
	}
	return s
}

type Totals[N int | int64] struct {
	owner confine.Owner
	seen  []N //confined:control
	total N   //confined:control
}

//confined:entry
func (t *Totals[N]) run(in chan N) {
	t.owner.Bind()
	for n := range in {
		t.seen = append(t.seen, n)
		t.total = sum(t.seen) // silent
	}
}

// instantiate forces both instantiations through SSA.
func instantiate() {
	q := &Queue[string]{in: make(chan string)}
	go q.run()
	a := &Totals[int]{}
	go a.run(make(chan int))
	b := &Totals[int64]{}
	go b.run(make(chan int64))
}
