package guarded

import "testing"

var shared = NewCache("t")

// The test pokes at internals on its own goroutine: its accesses are no
// evidence, and its calls do not make putLocked run unlocked.
func TestPeek(t *testing.T) {
	shared.putLocked("a", 1)
	if shared.entries["a"] != 1 {
		t.Fatal("no a")
	}
}
