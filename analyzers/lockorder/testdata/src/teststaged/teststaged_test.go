package teststaged

import "testing"

var tables []*Table

// The test holds a shard's lock so that a writer it starts blocks, and
// flushes on its own goroutine meanwhile: nothing runs Flush at the same
// time. Silent.
func TestStagedWriter(t *testing.T) {
	tb := &Table{}
	s := &Shard{}
	tb.shards = append(tb.shards, s)
	tables = append(tables, tb)
	s.mu.Lock()
	done := make(chan bool)
	go func() { done <- s.mu.TryLock() }()
	tb.Flush()
	s.mu.Unlock()
	<-done
}

// This one starts the rebuild on another goroutine while holding a part
// lock and rebuilding again: the two orders can meet.
func TestRacingRebuild(t *testing.T) {
	x := &Index{}
	p := &Part{}
	x.parts = append(x.parts, p)
	go x.Rebuild()
	p.mu.Lock()
	x.Rebuild() // want `lock order inversion in test code: Index.mu then Part.mu in Index.Rebuild .* but Part.mu then Index.mu in TestRacingRebuild .*\[lock-order-test\]`
	p.mu.Unlock()
}
