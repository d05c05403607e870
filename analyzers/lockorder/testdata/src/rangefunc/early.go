package rangefunc

import (
	"strings"
	"sync"
)

// A range-over-func body that unlocks and returns out of the loop
// (nats-server's Sublist.Insert over strings.SplitSeq) lets go of the
// enclosing function's lock on that path: the function's returns are
// checked, not the body's.

type Trie struct {
	sync.Mutex
	nodes map[string]int
}

// Insert unlocks before each return. Silent.
func (t *Trie) Insert(subject string) bool {
	t.Lock()
	for tok := range strings.SplitSeq(subject, ".") {
		if tok == "" {
			t.Unlock()
			return false
		}
		t.nodes[tok]++
	}
	t.Unlock()
	return true
}

// InsertLeaky forgets the unlock on the early return.
func (t *Trie) InsertLeaky(subject string) bool {
	t.Lock()
	for tok := range strings.SplitSeq(subject, ".") {
		if tok == "" {
			return false // want `Trie.Mutex taken at early.go:\d+ is still held on this return path \(other paths release it\) \[lock-leak\]`
		}
		t.nodes[tok]++
	}
	t.Unlock()
	return true
}
