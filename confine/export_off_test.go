//go:build !confine && !race

package confine

// ResetLockOrder does nothing: this build keeps no lock-order graph.
func ResetLockOrder() {}
