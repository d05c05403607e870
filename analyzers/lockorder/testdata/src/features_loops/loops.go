// Package features_loops: goroutines started in a loop with a lock held,
// and locks taken in loops.
package features_loops

import "sync"

type Agg struct {
	mu    sync.Mutex
	total int //confined:guardedby mu
}

func (a *Agg) Fan(xs []int) {
	var wg sync.WaitGroup
	a.mu.Lock()
	for _, x := range xs {
		wg.Add(1)
		go func() { // silent: the goroutine does not inherit mu, and takes it itself
			defer wg.Done()
			a.mu.Lock()
			a.total += x
			a.mu.Unlock()
		}()
	}
	a.mu.Unlock()
	wg.Wait()
}

func (a *Agg) FanBad(xs []int) {
	for _, x := range xs {
		go func() {
			a.total += x // want `write to Agg.total without holding Agg.mu \[guardedby\]`
		}()
	}
}

func (a *Agg) LoopRelock(xs []int) {
	for _, x := range xs {
		a.mu.Lock() // want `Agg.mu may still be held from the previous loop iteration \(taken at loops.go:38\): Lock on the next iteration deadlocks \[lock-leak\]`
		if x < 0 {
			continue
		}
		a.total += x
		a.mu.Unlock()
	}
}

func (a *Agg) LoopOK(xs []int) {
	for _, x := range xs {
		a.mu.Lock()
		if x < 0 {
			a.mu.Unlock()
			continue
		}
		a.total += x
		a.mu.Unlock()
	}
}
