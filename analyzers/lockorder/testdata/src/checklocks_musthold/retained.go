package checklocks_musthold

import "sync"

// A field's address kept and used later is an access where it is used:
// under the locks held there, not where the address was taken.
type table struct {
	mu sync.Mutex
	// +checklocks:mu
	rows []int
	// +checklocks:mu
	count int
}

func (t *table) useAfterUnlock() int {
	t.mu.Lock()
	p := &t.count
	t.mu.Unlock()
	return *p // want `read of table.count without holding table.mu \[guardedby\]`
}

func (t *table) storeAfterUnlock(n int) {
	t.mu.Lock()
	p := &t.rows
	t.mu.Unlock()
	*p = append(*p, n) // want `read of table.rows without holding table.mu \[guardedby\]` `write to table.rows without holding table.mu \[guardedby\]`
}

func (t *table) useInBranch(add bool) {
	t.mu.Lock()
	p := &t.count
	if add {
		*p++
	}
	t.mu.Unlock()
}

func (t *table) useBeforeUnlock() {
	t.mu.Lock()
	p := &t.rows
	*p = append(*p, len(*p))
	t.count = len(*p)
	t.mu.Unlock()
}
