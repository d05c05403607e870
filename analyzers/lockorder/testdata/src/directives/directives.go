// Package directives has one malformed lock directive of every class the
// lockorder analyzer owns; each is reported where it is written.
package directives

import "sync"

// Counter is annotated correctly; it must stay silent.
type Counter struct {
	mu sync.Mutex
	n  int //confined:guardedby mu
}

func (c *Counter) inc() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

// Broken carries the malformed lock directives.
type Broken struct {
	mu    sync.Mutex
	count int
	a     int // +checkloks:mu // want `unknown checklocks annotation \+checkloks; did you mean \+checklocks\? \[directive-unknown\]`
	b     int //confined:guardedby mu count // want `//confined:guardedby takes exactly one lock, got 2 arguments.*\[directive-args\]`
	c     int //confined:guardedby count // want `count is not a lock \(type int\).*\[directive-lock\]`
	d     int //confined:guardedby nosuch // want `\[directive-lock\]`
}

//confined:guardedby mu // want `//confined:guardedby is not allowed on func.*\[directive-placement\]`
func (b *Broken) placed() {}

//confined:requires mu
//confined:excludes mu // want `\[directive-conflict\]`
func (b *Broken) conflicting() {}

// Twice writes two directives in one trailing comment: the second, a lock
// verb, is lockorder's to report.
type Twice struct {
	mu sync.Mutex
	n  int //confined:control //confined:guardedby mu // want `one directive per comment: "//confined:guardedby mu" after //confined:control.*\[directive-malformed\]`
}
