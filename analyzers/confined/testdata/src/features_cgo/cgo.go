// Package features_cgo: a package with a cgo file is analysed (through
// the cgo-generated files), positions point into the original file.
package features_cgo

/*
static int twice(int x) { return 2 * x; }
*/
import "C"

import "github.com/confinelint/confinelint/confine"

type Dev struct {
	owner confine.Owner
	reads int //confined:control
}

//confined:entry
func (d *Dev) run() {
	d.owner.Bind()
	d.reads = int(C.twice(C.int(d.reads))) // silent: on control
	go func() {
		d.reads = int(C.twice(1)) // want `d.reads is confined to control but written on the goroutine started by the go statement`
	}()
}
