package main

import "sync"

type table struct {
	mu   sync.RWMutex
	rows map[int]int
}

func (t *table) grow() {
	t.mu.Lock()
	t.rows[len(t.rows)] = 0
	t.mu.Unlock()
}

func (t *table) ensure(n int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for len(t.rows) < n {
		t.grow()
	}
}

func main() {
	t := &table{rows: map[int]int{}}
	t.ensure(3)
}
