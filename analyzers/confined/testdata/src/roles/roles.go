// Package roles: state of one role touched from another role's goroutine,
// and a value receiver reading a copy on a foreign goroutine.
package roles

import "github.com/confinelint/confinelint/confine"

type Shard struct {
	pollOwner confine.Owner //confined:control poll
	ctlOwner  confine.Owner
	fetched   int //confined:control poll
	committed int //confined:control
}

//confined:entry poll
func (s *Shard) poll() {
	s.pollOwner.Bind()
	s.fetched++
	s.committed = s.fetched // want `s.committed is confined to control but written on poll's goroutine: Shard.poll -> s.committed`
}

//confined:entry
func (s *Shard) control() {
	s.ctlOwner.Bind()
	s.committed++
	_ = s.fetched // want `s.fetched is confined to poll but read on control's goroutine: Shard.control -> s.fetched`
}

//confined:control
type Window struct{ lo, hi int }

// width reads its receiver's copy.
func (w Window) width() int { return w.hi - w.lo }

//confined:callback
func onTick(w *Window) {
	w.lo++ // want `w.lo is confined to control but written on the goroutine running callback onTick`
}

// Box is owned by control whatever its element type.
//
//confined:control
type Box[T any] struct{ v T }

func (b *Box[T]) set(v T) {
	b.v = v // want `b.v is confined to control but written on the goroutine started by the go statement: Box.set -> b.v`
}

func startBox(b *Box[int]) { go b.set(1) }
