package readwrite

import "testing"

// Tests own what they build: no role needed to poke at state.
func TestStats(t *testing.T) {
	s := newStats()
	s.hits = 3
	if s.hits != 3 {
		t.Fatal(s.hits)
	}
}
