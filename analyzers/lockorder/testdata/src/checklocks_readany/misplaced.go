package checklocks_readany

import "sync"

// Misplaced readany: each is a directive problem, and the field keeps its
// plain guards.
type misplaced struct {
	mu sync.Mutex
	rw sync.RWMutex

	none int // +checklocksreadany // want `\+checklocksreadany on field none, which has no guard: it lets a read hold any one of a field's several guards \(\+checklocks:mu lines on the field\) \[directive-placement\]`

	// One guard: the readany changes nothing and is accepted silently, as by
	// checklocks.
	// +checklocks:mu
	one int // +checklocksreadany

	// +checklocks:mu
	// +checklocks:rw
	// +checklocksreadany
	twice int // +checklocksreadany // want `\+checklocksreadany repeats \+checklocksreadany on line 20 \[directive-conflict\]`

	// +checklocks:mu
	// +checklocks:rw
	withArg int // +checklocksreadany:mu // want `\+checklocksreadany takes no arguments.*\[directive-args\]`
}

// +checklocksreadany // want `\+checklocksreadany is not allowed on func readAnyOnFunc; it belongs on a struct field \[directive-placement\]`
func readAnyOnFunc() {}

var (
	globalMu sync.Mutex
	// +checklocks:globalMu
	global int // +checklocksreadany // want `\+checklocksreadany is not allowed on var global; it belongs on a struct field \[directive-placement\]`
)

// With one guard the readany is dropped: the guard applies as written.
func (m *misplaced) readOne() int {
	return m.one // want `read of misplaced.one without holding misplaced.mu \[guardedby\]`
}

func (m *misplaced) readTwice() int {
	m.rw.RLock()
	defer m.rw.RUnlock()
	return m.twice
}
