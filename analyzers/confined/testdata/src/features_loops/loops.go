// Package features_loops: goroutines started in loops, with the chain from
// the go statement to the access.
package features_loops

import "github.com/confinelint/confinelint/confine"

type Fetcher struct {
	owner   confine.Owner
	pending int //confined:control
	results chan int
}

//confined:entry
func (f *Fetcher) run(parts []int) {
	f.owner.Bind()
	for _, p := range parts {
		f.pending++ // silent: on control
		go func() {
			f.finish(p)
		}()
	}
	for i := range 3 {
		go f.retry(i)
	}
	for i := 0; i < len(parts); i++ {
		go func() {
			f.results <- parts[i] // silent: the mailbox is the sanctioned way back
		}()
	}
	for r := range f.results {
		_ = r
		f.pending-- // silent: received values handled on control
	}
}

func (f *Fetcher) finish(p int) {
	f.done(p)
}

func (f *Fetcher) done(p int) {
	f.pending -= p // want `f.pending is confined to control but written on the goroutine started by the go statement: Fetcher.run.func1 -> Fetcher.finish -> Fetcher.done -> f.pending`
}

func (f *Fetcher) retry(i int) {
	if f.pending > i { // want `f.pending is confined to control but read on the goroutine started by the go statement: Fetcher.retry -> f.pending`
		return
	}
}
