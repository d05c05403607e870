package features_tests

import "testing"

func TestSize(t *testing.T) {
	p := newPool()
	p.size = 2 // silent: construction in the test
	go func() {
		p.size++ // want `p.size is confined to control but written on the goroutine started by the go statement`
	}()
}
