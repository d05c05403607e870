// Package asyncapis: control state mutated from functions that the
// standard library and common modules run on other goroutines.
package asyncapis

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/confinelint/confinelint/confine"
	"golang.org/x/sync/errgroup"
)

type Loop struct {
	owner confine.Owner
	count int   //confined:control
	items []int //confined:control
}

//confined:entry
func (l *Loop) run(ctx context.Context, mux *http.ServeMux, p *Pool) {
	l.owner.Bind()
	time.AfterFunc(time.Second, func() {
		l.count++ // want `l.count is confined to control but written on the goroutine started by time.AfterFunc`
	})
	context.AfterFunc(ctx, func() {
		l.count = 0 // want `l.count is confined to control but written on the goroutine started by context.AfterFunc`
	})
	var g errgroup.Group
	g.Go(func() error {
		l.count-- // want `l.count is confined to control but written on the goroutine started by errgroup.Group.Go`
		return nil
	})
	var wg sync.WaitGroup
	wg.Go(func() {
		l.items = append(l.items, 1) // want `l.items is confined to control but written on the goroutine started by sync.WaitGroup.Go`
	})
	mux.HandleFunc("/reset", l.reset)
	mux.Handle("/bump", http.HandlerFunc(l.bump))
	p.Submit(func() {
		l.count += 2 // want `l.count is confined to control but written on the goroutine started by Pool.Submit`
	})
	// Synchronous: the comparator runs on this goroutine.
	sort.Slice(l.items, func(i, j int) bool { return l.items[i] < l.items[j] })
	wg.Wait()
	_ = g.Wait()
}

func (l *Loop) reset(w http.ResponseWriter, r *http.Request) {
	l.count = 0 // want `l.count is confined to control but written on the goroutine started by http.ServeMux.HandleFunc`
}

func (l *Loop) bump(w http.ResponseWriter, r *http.Request) {
	l.count++ // want `l.count is confined to control but written on a http.HandlerFunc goroutine`
}

// Pool is a worker pool.
type Pool struct{ jobs chan func() }

// Submit runs f on one of the pool's goroutines.
//
//confined:spawns f
func (p *Pool) Submit(f func()) { p.jobs <- f }
