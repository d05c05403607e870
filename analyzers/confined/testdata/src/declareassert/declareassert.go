// Package declareassert: static declarations paired with the runtime
// owner (rule 5).
package declareassert

import "github.com/confinelint/confinelint/confine"

type Engine struct {
	owner confine.Owner
	queue []int //confined:control
}

//confined:entry
func (e *Engine) loop() { // want `Engine.loop is the //confined:entry of control's goroutine but never calls Bind\(\)`
	for {
		e.queue = e.queue[:0]
	}
}

//confined:entry
func (e *Engine) loopFixed() {
	e.owner.Bind()
	e.queue = nil
}

// Push must run on the control goroutine.
//
//confined:control
func (e *Engine) Push(n int) { // want `Engine.Push is //confined:control and callable from code the analysis cannot see, but never calls Assert\(\)`
	e.queue = append(e.queue, n)
}

// PushFixed must run on the control goroutine, and checks it.
//
//confined:control
func (e *Engine) PushFixed(n int) {
	e.owner.Assert()
	e.queue = append(e.queue, n)
}

// Len declares its role by asserting it: its body may touch the queue.
func (e *Engine) Len() int {
	e.owner.Assert()
	return len(e.queue)
}

func (e *Engine) watch() { go e.report() }

func (e *Engine) report() {
	_ = e.Len() // want `Engine.Len is confined to control but called on the goroutine started by the go statement`
}

// Poller's owner is annotated with its role, so asserting it implies poll.
type Poller struct {
	owner confine.Owner //confined:control poll
	ctl   confine.Owner
	seen  int //confined:control poll
}

//confined:entry poll
func (p *Poller) poll() {
	p.owner.Bind()
	p.seen++
	_ = p.Count()
}

// Count asserts the poll owner.
func (p *Poller) Count() int {
	p.owner.Assert()
	return p.seen
}

//confined:entry
func (p *Poller) control() {
	p.ctl.Bind()
	_ = p.Count() // want `Poller.Count is confined to poll but called on control's goroutine`
}
