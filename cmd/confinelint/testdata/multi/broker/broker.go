// Package broker declares the poll role that package consumer uses, and a
// commit that must follow a drain.
package broker

// Broker is a client of a remote broker.
type Broker struct{}

// Poll is the poll goroutine.
//
//confined:entry poll
func (b *Broker) Poll() {}

// OnRevoked runs f on the broker's goroutine.
//
//confined:spawns f
func (b *Broker) OnRevoked(f func()) { go f() }

// Commit commits offsets.
//
//confined:commit
func (b *Broker) Commit(m map[int32]int64) {}
