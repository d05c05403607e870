package mayacquire

import "sync"

// A lock taken on every path, at a different place on each branch, is
// taken for sure: a caller holding it deadlocks whichever branch runs
// (influxdb's Measurement.filters under TagSets' read lock).
type Measurement struct {
	mu     sync.RWMutex
	sorted []uint64
	byTag  map[string][]uint64
	strict bool
}

func (m *Measurement) SeriesIDs() []uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.sorted
}

func (m *Measurement) filters(tag string) []uint64 {
	if tag == "" {
		return m.SeriesIDs()
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byTag[tag]
}

func (m *Measurement) TagSets(tag string) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.filters(tag)) // want `RLock of Measurement.mu by Measurement.filters \(at sites.go:\d+\) while already read-locked since sites.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
}

func (m *Measurement) Add(id uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sorted = append(m.sorted, id)
}

// lookup read-locks on one branch, and on the other only through a
// helper that may not lock: not on every path. Silent.
func (m *Measurement) maybeIDs() []uint64 {
	if !m.strict {
		return nil
	}
	return m.SeriesIDs()
}

func (m *Measurement) lookup(tag string) []uint64 {
	if tag == "" {
		return m.maybeIDs()
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byTag[tag]
}

func (m *Measurement) Count(tag string) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.lookup(tag))
}
