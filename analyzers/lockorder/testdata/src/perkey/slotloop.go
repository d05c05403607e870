package perkey

import "sync"

// A commit takes its latch slots one by one through a helper that picks
// the next slot itself (tikv client-go's latches: acquireNext indexes
// requiredSlots by acquiredCount and advances it), holding them all
// until the deferred release. Each turn locks the next slot, not the one
// the previous turn took: no re-lock. Silent.

type latch struct {
	mu    sync.Mutex
	maxTS uint64
}

type latchLock struct {
	requiredSlots []int
	acquiredCount int
}

type latches struct {
	slots []latch
}

func (ls *latches) acquireNext(l *latchLock) {
	s := &ls.slots[l.requiredSlots[l.acquiredCount]]
	s.mu.Lock()
	l.acquiredCount++
}

func (ls *latches) release(l *latchLock) {
	for i := l.acquiredCount - 1; i >= 0; i-- {
		ls.slots[l.requiredSlots[i]].mu.Unlock()
	}
	l.acquiredCount = 0
}

func (ls *latches) commit(slots []int) {
	l := &latchLock{requiredSlots: slots}
	defer ls.release(l)
	for l.acquiredCount < len(l.requiredSlots) {
		ls.acquireNext(l)
	}
}
