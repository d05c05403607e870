// Package anyfunc: //confined:any functions are callable from anywhere,
// so their bodies may not touch ROLE state.
package anyfunc

import "github.com/confinelint/confinelint/confine"

type Queue struct {
	owner confine.Owner
	n     int //confined:control
	in    chan int
}

//confined:entry
func (q *Queue) run() {
	q.owner.Bind()
	for range q.in {
		q.n++
	}
}

// Peek reads control state although it claims to be safe anywhere.
//
//confined:any
func (q *Queue) Peek() int {
	return q.n // want `Queue.Peek is //confined:any but q.n, confined to control, is read in it: Queue.Peek -> q.n`
}

//confined:any
func (q *Queue) size() int {
	return q.count() // reported in count, on the path from size
}

func (q *Queue) count() int {
	return q.n // want `Queue.size is //confined:any but q.n, confined to control, is read in it: Queue.size -> Queue.count -> q.n`
}

// Pending only uses the channel: fine from anywhere.
//
//confined:any
func (q *Queue) Pending() int { return len(q.in) }

func (q *Queue) watch() { go func() { _ = q.size() + q.Pending() }() }
