// Package lease is a lease manager modeled on etcd's server/lease Lessor.
package lease

import "sync"

// RangeDeleter deletes keys when their lease is revoked; it is implemented by
// the mvcc store and registered through SetRangeDeleter.
type RangeDeleter interface {
	DeleteRange(keys []string)
}

// Lessor tracks which keys are attached to which lease.
type Lessor struct {
	mu     sync.Mutex
	leases map[int64][]string
	rd     RangeDeleter
}

// NewLessor returns an empty lessor.
func NewLessor() *Lessor { return &Lessor{leases: make(map[int64][]string)} }

// SetRangeDeleter registers rd.
func (le *Lessor) SetRangeDeleter(rd RangeDeleter) {
	le.mu.Lock()
	le.rd = rd
	le.mu.Unlock()
}

// Attach binds key to lease id.
func (le *Lessor) Attach(id int64, key string) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.leases[id] = append(le.leases[id], key)
}

// Revoke deletes the lease's keys through the RangeDeleter while holding le.mu.
func (le *Lessor) Revoke(id int64) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.rd != nil {
		le.rd.DeleteRange(le.leases[id])
	}
	delete(le.leases, id)
}
