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

// The test holds a batch's lock while its goroutine merges; the merge may
// start the background drain (the other order), but only when the queue
// is not flushed by hand, which the test's queue is: a goroutine that
// production code starts is not the test's. Silent.
func TestMergeWhileBatchHeld(t *testing.T) {
	q := &Queue{manual: true}
	b := &Batch{}
	q.batches = append(q.batches, b, &Batch{})
	b.mu.Lock()
	done := make(chan struct{})
	go func() { defer close(done); q.Merge() }()
	q.mu.Lock()
	q.batches = q.batches[1:]
	q.mu.Unlock()
	b.mu.Unlock()
	<-done
}

// Here the test itself starts the drain, then holds a batch's lock and
// takes the queue's: the two orders can meet.
func TestDrainWhileBatchHeld(t *testing.T) {
	q := &Queue{}
	b := &Batch{}
	q.batches = append(q.batches, b)
	go q.drain()
	b.mu.Lock()
	q.mu.Lock() // want `lock order inversion in test code: Queue.mu then Batch.mu in Queue.drain .* but Batch.mu then Queue.mu in TestDrainWhileBatchHeld .*\[lock-order-test\]`
	q.mu.Unlock()
	b.mu.Unlock()
}

// The test sets an expectation under the producer's lock, then drives
// the delivery loop its constructor started: the loop blocks under that
// lock only once the test has let it go. Silent.
func TestExpectThenDrive(t *testing.T) {
	p := NewProducer()
	p.Expect()
	p.In <- 1
	<-p.Out
}
