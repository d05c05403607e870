package implicitstring

import (
	"encoding/json"
	"sync"
)

// encoding/json calls the MarshalJSON method of the value it is given.

type PeerState struct {
	mtx    sync.Mutex
	height int64
}

// MarshalJSON locks the state and marshals it, which finds *PeerState's
// own MarshalJSON again: a method renamed from ToJSON became the
// encoder's hook for the very value it marshals.
func (ps *PeerState) MarshalJSON() ([]byte, error) {
	ps.mtx.Lock()
	defer ps.mtx.Unlock()
	return json.Marshal(ps) // want `PeerState.mtx locked again by PeerState.MarshalJSON \(at marshal.go:19\) while held since marshal.go:19: self-deadlock \[double-lock\]`
}

type Stats struct {
	mu    sync.RWMutex
	count int
}

func (s *Stats) MarshalJSON() ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return json.Marshal(map[string]int{"count": s.count})
}

// Dump writes the stats with their lock held, which MarshalJSON takes
// again.
func (s *Stats) Dump(enc *json.Encoder) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	return enc.Encode(s) // want `Stats.mu locked again by Stats.MarshalJSON \(at marshal.go:30\) while held since marshal.go:38: self-deadlock \[double-lock\]`
}

// The correct counterparts: the state marshals a defined type without
// methods, so the encoder falls back to the plain struct; the stats are
// marshalled after the unlock.
type RoundState struct {
	mtx    sync.Mutex
	Height int64
}

type plainRoundState RoundState

func (rs *RoundState) MarshalJSON() ([]byte, error) {
	rs.mtx.Lock()
	defer rs.mtx.Unlock()
	return json.Marshal((*plainRoundState)(rs))
}

func (s *Stats) Snapshot() ([]byte, error) {
	s.mu.Lock()
	s.count++
	s.mu.Unlock()
	return json.Marshal(s)
}
