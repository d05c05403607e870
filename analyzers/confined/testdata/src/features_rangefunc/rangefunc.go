// Package features_rangefunc: range-over-func bodies run on the caller's
// goroutine (the iterator calls yield synchronously).
package features_rangefunc

import (
	"iter"

	"github.com/confinelint/confinelint/confine"
)

type Index struct {
	owner confine.Owner
	keys  []string //confined:control
	count int      //confined:control
}

func (x *Index) all() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, k := range x.keys {
			if !yield(k) {
				return
			}
		}
	}
}

//confined:entry
func (x *Index) run() {
	x.owner.Bind()
	for k := range x.all() {
		x.count += len(k) // silent: the body runs on control
	}
	for range x.all() {
		go func() {
			x.count = 0 // want `x.count is confined to control but written on the goroutine started by the go statement`
		}()
	}
}
