// Package features_defer: deferred closures run on the goroutine that
// deferred them.
package features_defer

import "github.com/confinelint/confinelint/confine"

type Session struct {
	owner  confine.Owner
	active int //confined:control
}

//confined:entry
func (s *Session) run(work chan func()) {
	s.owner.Bind()
	defer func() {
		s.active = 0 // silent: deferred on control
	}()
	for w := range work {
		s.active++
		func() {
			defer func() { s.active-- }() // silent: nested deferred closure, still control
			w()
		}()
		go func() {
			defer func() {
				s.active-- // want `s.active is confined to control but written on the goroutine started by the go statement: Session.run.func3 -> Session.run.func3.func1 -> s.active`
			}()
			w()
		}()
	}
}
