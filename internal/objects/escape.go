package objects

import "golang.org/x/tools/go/ssa"

// Escapes reports whether fn, a function of this package, lets its i-th
// parameter escape: publishes it by the rule of publications (hands it to
// a goroutine, stores it into memory it does not own, passes it to a call
// that keeps it). A method that only reads and writes its receiver's
// fields, or calls helpers that do, keeps it: `c.init()` on a fresh c
// publishes nothing. Recursion counts as escaping.
func (x *Index) Escapes(fn *ssa.Function, i int) bool {
	if len(fn.Blocks) == 0 || i >= len(fn.Params) {
		return true
	}
	st := x.escapes[fn]
	if st == nil {
		st = make([]int8, len(fn.Params))
		x.escapes[fn] = st
	}
	switch st[i] {
	case escapes, inProgress:
		return true
	case stays:
		return false
	}
	st[i] = inProgress
	out := len(x.publications(fn.Params[i])) > 0
	st[i] = stays
	if out {
		st[i] = escapes
	}
	return out
}

const (
	unknown int8 = iota
	escapes
	stays
	inProgress
)
