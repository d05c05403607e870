package checklocks_atomic

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// An atomic use of a field of a struct-valued field is the inner field's
// business: table.slots is used atomically, not registry.table, so an
// annotated registry need not declare table atomic (gVisor's
// VirtualFilesystem.mounts.slots). The inner field of an annotated struct
// still must be declared.
type slotTable struct {
	size  atomic.Uint64
	slots unsafe.Pointer
}

type registry struct {
	mu sync.Mutex
	// +checklocks:mu
	names []string
	table slotTable
	inner counters
}

type counters struct {
	mu sync.Mutex
	// +checklocks:mu
	last int64
	hits int64
}

func (r *registry) loaded() bool {
	return atomic.LoadPointer(&r.table.slots) != nil
}

func (r *registry) bump() {
	atomic.AddInt64(&r.inner.hits, 1) // want `counters.hits is used with sync/atomic but not declared atomic \(\+checkatomic or //confined:atomic\) \[atomic\]`
}
