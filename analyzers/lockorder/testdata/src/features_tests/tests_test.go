package features_tests

import "testing"

func TestInc(t *testing.T) {
	c := &Counter{}
	c.N = 1 // silent: construction
	c.Inc()
	c.mu.Lock()
	c.Inc() // want `Counter.mu locked again by Counter.Inc \(at tests.go:13\) while held since tests_test.go:9: self-deadlock \[double-lock\]`
	c.mu.Unlock()
}
