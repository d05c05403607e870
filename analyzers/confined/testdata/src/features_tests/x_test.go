package features_tests_test

import (
	"testing"

	"features_tests"
)

func TestResize(t *testing.T) {
	p := &features_tests.Pool{}
	p.Resize(1) // silent: the test goroutine is control
	go func() {
		p.Resize(2) // want `Pool.Resize is confined to control but called on the goroutine started by the go statement`
	}()
}
