// Package async declares a worker pool's asynchronous API in code: go
// vet, golangci-lint and the standalone driver all see it, here and in
// every package importing this one, without a flag.
package async

// example:start

//confined:async example.com/pool.(*Pool).Submit arg0

// example:end

import (
	"example.com/pool"

	"github.com/confinelint/confinelint/confine"
)

type Loader struct {
	owner   confine.Owner //confined:control
	loaded  int           //confined:control
	results chan int
	pool    *pool.Pool
}

//confined:entry
func (l *Loader) run(files []string) {
	l.owner.Bind()
	for range files {
		l.pool.Submit(func() { l.results <- 1 }) // runs on a pool goroutine: it may only send
	}
	for range files {
		l.loaded += <-l.results
	}
}
