package leak

import "sync"

// A check made under a read lock, let go, and made again under the write
// lock: between the two another goroutine may have changed the answer,
// so the second check can go the other way. Its early return keeps the
// lock.
type Streams struct {
	sync.RWMutex
	streams map[int]stream
}

type stream struct{ owner *string }

func (s *Streams) Claim(id int, name string) bool {
	s.RLock()
	claimed := s.streams[id].owner != nil
	s.RUnlock()
	if claimed {
		return false
	}
	s.Lock()
	claimed = s.streams[id].owner != nil
	if claimed {
		return false // want `Streams.RWMutex taken at recheck.go:\d+ is still held on this return path \(other paths release it\) \[lock-leak\]`
	}
	s.streams[id] = stream{owner: &name}
	s.Unlock()
	return true
}

// Correct: the second check unlocks before it returns.
type Leases struct {
	sync.RWMutex
	holder map[int]stream
}

func (l *Leases) Claim(id int, name string) bool {
	l.RLock()
	held := l.holder[id].owner != nil
	l.RUnlock()
	if held {
		return false
	}
	l.Lock()
	defer l.Unlock()
	if l.holder[id].owner != nil {
		return false
	}
	l.holder[id] = stream{owner: &name}
	return true
}
