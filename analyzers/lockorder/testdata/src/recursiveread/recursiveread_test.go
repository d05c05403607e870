package recursiveread

import "testing"

// Readers only run meanwhile: silent.
func TestReadersOnly(t *testing.T) {
	s := &Store{m: map[string]int{}}
	done := make(chan int)
	go func() { done <- s.Peek("a") }()
	s.mu.RLock()
	_ = s.Get("a")
	s.mu.RUnlock()
	<-done
}

// A writer the test starts can queue between the two read locks.
func TestWithWriter(t *testing.T) {
	s := &Store{m: map[string]int{}}
	go s.Put("a", 1)
	s.mu.RLock()
	_ = s.Get("a") // want `RLock of Store.mu by Store.Get .* deadlocks behind a waiting writer`
	s.mu.RUnlock()
}
