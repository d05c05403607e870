// Package lockerdeclb uses lockerdecl's Lockers across the package
// boundary: their exported effects apply here.
package lockerdeclb

import "lockerdecl"

func add(t *lockerdecl.Table) {
	t.Lock()
	t.Grow()
	t.Unlock()
}

func forgot(t *lockerdecl.Table) {
	t.Grow() // want `call to lockerdecl.Table.Grow requires Table.mu held exclusively, but it is not held here \[requires\]`
}

func size(x *lockerdecl.Index) int {
	x.Lock()
	defer x.Unlock()
	return x.Len()
}
