package looprelock

import "sync"

// A read lock taken once per turn and released in a second loop (a
// benchmark of RLock itself) blocks on the next turn only behind a
// waiting writer: with no writer of the lock, silent.
func readMany(n int) {
	var mu sync.RWMutex
	i := 0
	for ; i < n; i++ {
		mu.RLock()
	}
	for ; i > 0; i-- {
		mu.RUnlock()
	}
}

// With a writer, a read lock carried into the next turn deadlocks when
// the writer queues between two turns.
type Table struct {
	mu   sync.RWMutex
	rows []int
}

func (t *Table) Append(r int) {
	t.mu.Lock()
	t.rows = append(t.rows, r)
	t.mu.Unlock()
}

func (t *Table) scan(stop int) int {
	n := 0
	for _, r := range t.rows {
		t.mu.RLock() // want `Table.mu may still be read-locked from the previous loop iteration \(taken at readturns.go:35\): RLock on the next iteration deadlocks behind a waiting writer \(Table.Append write-locks it\) \[lock-leak\]`
		if r == stop {
			t.mu.RUnlock()
			continue
		}
		n++
	}
	return n
}

var _ = []any{readMany, (*Table).scan}
