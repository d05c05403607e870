// Package runtimefix: the suggested fixes of missing-bind, missing-assert
// and undeclared-role add the runtime half where the owner is unambiguous.
package runtimefix

import "github.com/confinelint/confinelint/confine"

type Poller struct {
	owner  confine.Owner //confined:control poll
	paused bool          //confined:control poll
}

//confined:entry poll
func (p *Poller) run() { // want `Poller\.run is the //confined:entry of poll's goroutine but never calls Bind\(\)`
	for !p.paused {
		p.step()
	}
}

func (p *Poller) step() {}

// Pause stops the loop.
//
//confined:control poll
func (p *Poller) Pause() { p.paused = true } // want `Poller\.Pause is //confined:control poll and callable from code the analysis cannot see, but never calls Assert\(\)`

// Resume restarts it; its doc ends with a directive already.
//
//confined:requires_shared mu
func (p *Poller) Resume(mu *rwLock) { // want `declare it //confined:control poll \[`
	p.paused = false
}

type rwLock struct{}

func (*rwLock) Lock()    {}
func (*rwLock) Unlock()  {}
func (*rwLock) RLock()   {}
func (*rwLock) RUnlock() {}

// Twin has two owners: which one to assert is the author's call, so the
// fix only declares.
type Twin struct {
	a, b confine.Owner
	n    int //confined:control
}

//confined:entry
func (t *Twin) run() {
	t.a.Bind()
	t.n++
}

//confined:control
func (t *Twin) N() int { // want `Twin\.N is //confined:control and callable`
	return t.n
}
