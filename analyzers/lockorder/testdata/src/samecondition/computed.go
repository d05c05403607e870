package samecondition

import "sync"

// A lock taken and released under the same test of a computed value,
// inside a loop: the stripe a series hashes to, locked only when it is
// not the stripe already held. The value is computed once per iteration
// and tested twice; the lock does not outlive the iteration.
type stripe struct{ sync.RWMutex }

type series struct {
	sync.Mutex
	ref  int
	last int64
}

type stripes struct {
	size   int
	locks  []stripe
	hashes [][]*series
}

func (s *stripes) gc(mint int64) int {
	deleted := 0
	for hash := 0; hash < s.size; hash++ {
		s.locks[hash].Lock()
		for _, sr := range s.hashes[hash] {
			sr.Lock()
			ref := int(sr.ref) & (s.size - 1)
			if hash != ref {
				s.locks[ref].Lock()
			}
			if sr.last < mint {
				deleted++
			}
			if hash != ref {
				s.locks[ref].Unlock()
			}
			sr.Unlock()
		}
		s.locks[hash].Unlock()
	}
	return deleted
}

// The buggy counterpart: the release tests another value than the take,
// so the stripe may stay locked into the next iteration.
func (s *stripes) gcMismatched(mint int64) {
	for hash := 0; hash < s.size; hash++ {
		for _, sr := range s.hashes[hash] {
			ref := int(sr.ref) & (s.size - 1)
			if hash != ref {
				s.locks[ref].Lock() // want `stripe.RWMutex may still be held from the previous loop iteration`
			}
			if sr.last < mint && hash != ref+1 {
				s.locks[ref].Unlock()
			}
		}
	}
}

// A writer holding a series and taking a stripe, against gc's stripe
// then series: a real inversion between two functions, whichever of
// gc's witnesses is nested.
func (s *stripes) touch(sr *series) {
	sr.Lock()
	defer sr.Unlock()
	s.locks[sr.ref].Lock() // want `lock order inversion: stripe.RWMutex then series.Mutex in stripes.gc .* but series.Mutex then stripe.RWMutex in stripes.touch`
	s.locks[sr.ref].Unlock()
}
