package lockfacts // want package:"edges\\(lockfacts.A->lockfacts.B\\)"

// The facts the engine exports, checked with the summary analyzer that
// owns them.

import "sync"

var A, B sync.Mutex

// Both takes A then B.
func Both() { // want Both:`locks\(takes=lockfacts.A,lockfacts.B\)`
	A.Lock()
	B.Lock()
	B.Unlock()
	A.Unlock()
}

// Hold returns with A held.
func Hold() { A.Lock() } // want Hold:`locks\(acquires=g:lockfacts.A takes=lockfacts.A\)`

// Drop releases its caller's A.
func Drop() { A.Unlock() } // want Drop:`locks\(releases=g:lockfacts.A\)`

// Sink's Put is called with A held: importers that hand a Sink over learn
// it; Quiet, called with nothing held, exports nothing.
type Sink interface { // want Sink:`dispatches\(Put under lockfacts.A\)`
	Put(int)
}

type Quiet interface {
	Put(int)
}

func Publish(s Sink, q Quiet) { // want Publish:`locks\(takes=lockfacts.A\)`
	A.Lock()
	s.Put(1)
	A.Unlock()
	q.Put(1)
}
