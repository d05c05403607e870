// Package asyncflag: Pool.Run is made asynchronous by -confined.async in
// the test; without the flag it would be assumed synchronous.
package asyncflag

import "github.com/confinelint/confinelint/confine"

type Pool struct{ jobs chan func() }

func (p *Pool) Run(f func()) { p.jobs <- f }

type Loop struct {
	owner confine.Owner
	n     int //confined:control
}

//confined:entry
func (l *Loop) run(p *Pool) {
	l.owner.Bind()
	p.Run(func() {
		l.n++ // want `l.n is confined to control but written on the goroutine started by asyncflag.Pool.Run`
	})
}
