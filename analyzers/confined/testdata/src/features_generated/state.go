// Package features_generated: a finding in a generated file (standard
// "Code generated ... DO NOT EDIT." header) is not reported; the same code
// in a hand-written file is.
package features_generated

import "github.com/confinelint/confinelint/confine"

type State struct {
	owner confine.Owner
	n     int //confined:control
}

//confined:entry
func (s *State) run() {
	s.owner.Bind()
	s.n++
	s.handWritten()
	s.generated()
}

func (s *State) handWritten() {
	go func() {
		s.n = 0 // want `s.n is confined to control but written on the goroutine started by the go statement`
	}()
}
