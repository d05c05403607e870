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
