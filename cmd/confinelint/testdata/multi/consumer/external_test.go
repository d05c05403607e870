package consumer_test

import (
	"testing"

	"example.com/multi/consumer"
)

//confined:guardedby nosuch
var orphan int

func TestReset(t *testing.T) { new(consumer.Consumer).Reset() }
