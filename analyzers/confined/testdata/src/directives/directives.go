// Package directives has one malformed directive of every class the
// confined analyzer owns; each is reported where it is written.
package directives

import "github.com/confinelint/confinelint/confine"

// Worker is annotated correctly; it must stay silent.
type Worker struct {
	owner confine.Owner
	count int //confined:control
}

//confined:entry
func (w *Worker) run() {
	w.owner.Bind()
	w.count++
}

//confined:entyr // want `unknown directive //confined:entyr; did you mean //confined:entry\? \[directive-unknown\]`
func unknownVerb() {}

// confined:control // want `ordinary comment, not a directive.*\[directive-malformed\]`
func spaced() {}

//confined:callback now // want `//confined:callback takes no arguments \[directive-args\]`
func extraArg() {}

func ignored() {
	//confined:ignore // want `//confined:ignore needs a reason.*\[directive-ignore-reason\]`
	_ = 1
}

//confined:control // want `//confined:control is not allowed on a const declaration.*\[directive-placement\]`
const limit = 3

//confined:callback
//confined:entry // want `\[directive-conflict\]`
func both() {}

//confined:spawns n // want `//confined:spawns: parameter n has type int, not a function type \[directive-param\]`
func submit(n int) {}

//confined:control pol // want `role "pol" is not declared by any //confined:entry.*\[directive-role\]`
func typoRole() {}

// Explained shows how a directive carries an explanation: after a second
// //. Words right after the arguments are arguments.
type Explained struct {
	owner confine.Owner //confined:control // the runtime half
	a     int           //confined:control // owned by the control goroutine: silent
	b     int           //confined:control      owned by the control goroutine // want `//confined:control takes at most one ROLE, got 5 arguments; an explanation goes after a second //, as in //confined:control \[ROLE\] // owned by the control goroutine \[directive-args\]`
	c     int           //confined:control //confined:any // want `one directive per comment: "//confined:any" after //confined:control is an ordinary comment here and does nothing; put it on a line of its own.*\[directive-malformed\]`
}

//confined:serialized // want `//confined:serialized needs a ROLE; usage: //confined:serialized ROLE \[directive-args\]`
func noRole() {}

//confined:serialized pol // want `role "pol" is not declared.*\[directive-role\]`
func serializedTypo() {}

//confined:callback
//confined:serialized control // want `contradicts //confined:callback.*\[directive-conflict\]`
func serializedCallback() {}

//confined:async time.AfterFunc arg1 // want `//confined:async is not allowed on func asyncOnFunc; it belongs on a file-level comment.*\[directive-placement\]`
func asyncOnFunc() {}
