package methodvalue

import "sync"

type S struct {
	a, b sync.Mutex
}

func (s *S) takeB() {
	s.b.Lock()
	s.b.Unlock()
}

func (s *S) viaValue() {
	f := s.takeB
	s.a.Lock()
	f()
	s.a.Unlock()
}

func (s *S) reverse() {
	s.b.Lock()
	s.a.Lock() // want `lock order inversion: S.a then S.b in S.viaValue \(methodvalue.go:16 -> methodvalue.go:17 via S.takeB\) but S.b then S.a in S.reverse \(methodvalue.go:22 -> methodvalue.go:23\) \[lock-order\]`
	s.a.Unlock()
	s.b.Unlock()
}
