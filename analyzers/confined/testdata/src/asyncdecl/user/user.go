// Package user imports app, so app's //confined:async declarations (an
// AsyncAPIs package fact) apply here too, with no flag.
package user

import (
	"asyncdecl/app"
	"asyncdecl/pool"

	"github.com/confinelint/confinelint/confine"
)

var _ app.Consumer

type Loop struct {
	owner confine.Owner
	seen  int //confined:control
	pool  *pool.Pool
}

//confined:entry
func (l *Loop) run() {
	l.owner.Bind()
	l.pool.Submit(func() {
		l.seen++ // want `l\.seen is confined to control but written on the goroutine started by pool\.Pool\.Submit`
	})
}
