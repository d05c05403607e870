package leaflocks // want package:"edges\\(leaflocks.T.outer->leaflocks.T.inner\\)"

// Which lock classes the LockSummary facts leave out: private leaves,
// which no importer can hold or order. (The package fact is reported on
// line 1, so this is not the package's doc comment.)

import "sync"

// poolMu is private and nothing is taken under it: a private leaf.
var poolMu sync.Mutex

// Get takes only a private leaf: it exports no fact at all.
func Get() {
	poolMu.Lock()
	poolMu.Unlock()
}

// T has a private lock taken under another (outer is no leaf), a private
// leaf (inner) and an exported lock (Exp), which importers can hold.
type T struct {
	outer sync.Mutex
	inner sync.Mutex
	Exp   sync.Mutex
}

// Nested orders outer before inner: outer stays in the fact, inner goes.
func (t *T) Nested() { // want Nested:"locks\\(takes=leaflocks.T.outer\\)" Nested:"flows\\(stays\\)"
	t.outer.Lock()
	t.inner.Lock()
	t.inner.Unlock()
	t.outer.Unlock()
}

// Public takes the exported lock: kept.
func (t *T) Public() { // want Public:"locks\\(takes=leaflocks.T.Exp\\)" Public:"flows\\(stays\\)"
	t.Exp.Lock()
	t.Exp.Unlock()
}

// U's lock is private, but Acquire leaves it held: a caller can hold it
// and deadlock by calling Use, so it is kept everywhere.
type U struct{ mu sync.Mutex }

func (u *U) Acquire() { // want Acquire:"locks\\(acquires=recv.mu takes=leaflocks.U.mu\\)" Acquire:"flows\\(stays\\)"
	u.mu.Lock()
}

func (u *U) Use() { // want Use:"locks\\(takes=leaflocks.U.mu\\)" Use:"flows\\(stays\\)"
	u.mu.Lock()
	u.mu.Unlock()
}

// Locals orders two local mutexes in a goroutine it starts: nothing
// outside the package can name them, so neither their takes nor their
// edge go into a fact.
func Locals() {
	var a, b sync.Mutex
	done := make(chan bool)
	go func() {
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
		done <- true
	}()
	<-done
}
