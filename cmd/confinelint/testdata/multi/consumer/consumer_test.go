package consumer

import "testing"

func TestHits(t *testing.T) {
	c := new(Consumer)
	go func() { c.hits++ }()
	_ = c.hits
}
