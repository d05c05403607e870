package handoverhand

import "sync"

// After a plain branch the old name stays the lock's: one side locks the
// entry it found, unlocked by a defer of that value; the other makes a
// new one. Silent (nats' processGatewayRUnsub).
type entry struct {
	sync.RWMutex
	n int
}

type table struct {
	m sync.Map
}

func (t *table) drop(key string) int {
	var e *entry
	if v, ok := t.m.Load(key); ok {
		e = v.(*entry)
		e.Lock()
		defer e.Unlock()
	} else {
		e = &entry{}
	}
	if e.n == 0 {
		return 0
	}
	e.n--
	return e.n
}
