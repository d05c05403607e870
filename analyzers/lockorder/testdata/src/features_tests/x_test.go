package features_tests_test

import (
	"testing"

	"features_tests"
)

func TestExternal(t *testing.T) {
	c := new(features_tests.Counter)
	c.N = 1 // silent: construction
	c.Inc()
	check(t, c)
}

func check(t *testing.T, c *features_tests.Counter) {
	if c.N != 1 { // want `read of Counter.N without holding Counter.mu \[guardedby\]`
		t.Fatal("N")
	}
}
