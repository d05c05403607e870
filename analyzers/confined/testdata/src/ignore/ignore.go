// Package ignore: //confined:ignore silences exactly the finding on its
// statement; one that silences nothing is reported.
package ignore

import "github.com/confinelint/confinelint/confine"

type Meter struct {
	owner confine.Owner
	a, b  int //confined:control
}

//confined:entry
func (m *Meter) run() {
	m.owner.Bind()
	go m.sample()
}

func (m *Meter) sample() {
	//confined:ignore approximate gauge, a torn read is acceptable here
	_ = m.a
	_ = m.b // want `m.b is confined to control but read on the goroutine started by the go statement`
	//confined:ignore stale: nothing below is confined // want `this //confined:ignore silences no finding`
	println("sampled")
}
