//go:build confine || race

package confine

// ResetLockOrder forgets every lock class and edge, so that a test sees a
// fresh graph even when run again with -count. Mutexes already classed keep
// their old, now unreachable, classes.
func ResetLockOrder() {
	hideSyncBegin()
	resetLockGraph()
	hideSyncEnd()
}

//go:norace
func resetLockGraph() {
	lockGraph.mu.Lock()
	defer lockGraph.mu.Unlock()
	lockGraph.classes = nil
	lockGraph.sites = nil
}
