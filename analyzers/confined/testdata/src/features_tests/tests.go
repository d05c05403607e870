// Package features_tests: in-package test files and an external test
// package are analysed with the package.
package features_tests

import "github.com/confinelint/confinelint/confine"

type Pool struct {
	owner confine.Owner
	size  int //confined:control
}

// Run is the pool's loop.
//
//confined:entry
func (p *Pool) Run(in chan int) {
	p.owner.Bind()
	for n := range in {
		p.size += n
	}
}

// Resize changes the size on the control goroutine.
//
//confined:control
func (p *Pool) Resize(n int) {
	p.owner.Assert()
	p.size = n
}

func newPool() *Pool { return &Pool{size: 1} }
