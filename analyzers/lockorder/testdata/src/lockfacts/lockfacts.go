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
