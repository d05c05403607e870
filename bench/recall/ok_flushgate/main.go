// Pattern C. Modelled on a zap/Prometheus-pushgateway-style buffered sink:
// Flush takes the lock only inside `if force || full`, defers the unlock in
// that same branch, and the cheap early return happens before the Lock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type sink struct {
	mu      sync.Mutex
	buf     []string
	pending atomic.Int64 // approximate, readable without mu
	limit   int64
	flushed int
	batches int
}

func (s *sink) Write(line string) {
	s.mu.Lock()
	s.buf = append(s.buf, line)
	s.mu.Unlock()
	if s.pending.Add(1) >= s.limit {
		s.Flush(false)
	}
}

// Flush writes out the buffer. Without force it only flushes a full buffer.
func (s *sink) Flush(force bool) int {
	if !force && s.pending.Load() < s.limit {
		return 0 // early return before any Lock
	}
	if force || s.pending.Load() >= s.limit {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.buf) == 0 {
			return 0 // deferred Unlock releases
		}
		n := len(s.buf)
		s.flushed += n
		s.batches++
		s.buf = s.buf[:0]
		s.pending.Add(int64(-n))
		return n
	}
	return 0
}

// Stats reads counters; a lock is needed only when asked for exact values.
func (s *sink) Stats(exact bool) (int, int) {
	if !exact {
		return int(s.pending.Load()), -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushed, s.batches
}

func main() {
	s := &sink{limit: 16}
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 250; i++ {
				s.Write(fmt.Sprintf("g%d line %d", g, i))
				if i%40 == 0 {
					s.Flush(true)
				}
				if i%25 == 0 {
					s.Stats(i%50 == 0)
				}
			}
		}(g)
	}
	wg.Wait()
	s.Flush(true)
	flushed, batches := s.Stats(true)
	fmt.Println("flushed", flushed, "batches>0", batches > 0)
	if flushed != 6*250 {
		panic("lost lines")
	}
}
