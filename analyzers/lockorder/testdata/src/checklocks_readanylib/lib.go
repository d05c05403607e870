// Package checklocks_readanylib declares a +checklocksreadany field for
// an importer: the property travels with the field's facts.
package checklocks_readanylib

import "sync"

// Pair lets readers hold either lock; writers need both.
type Pair[T any] struct {
	Mu      sync.Mutex
	OtherMu sync.RWMutex

	// +checklocks:Mu
	// +checklocks:OtherMu
	Value T // +checklocksreadany
}
