package blocking

import (
	"sync"
	"time"
)

type W struct {
	mu    sync.Mutex
	other sync.Mutex
	ch    chan int
	n     int
}

func (w *W) worker() {
	for v := range w.ch {
		w.mu.Lock()
		w.n += v
		w.mu.Unlock()
	}
}

func (w *W) start() { go w.worker() }

// The worker takes mu to drain ch: sending with mu held can deadlock.
func (w *W) send(v int) {
	w.mu.Lock()
	w.ch <- v // want `W.mu \(taken at blocking.go:27\) is held across a channel send; the goroutine started by the go statement, which would unblock it, also takes W.mu \[blocking-held\]`
	w.mu.Unlock()
}

// No goroutine of the package takes other: silent.
func (w *W) sendOther(v int) {
	w.other.Lock()
	w.ch <- v
	time.Sleep(time.Millisecond)
	w.other.Unlock()
}

// Sleeping and timers have no goroutine on the other end: silent.
func (w *W) sleep() {
	w.mu.Lock()
	time.Sleep(time.Millisecond)
	<-time.After(time.Millisecond)
	w.mu.Unlock()
}

// The peer of Wait is the goroutine calling Done: it takes mu.
func (w *W) fanOut() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.mu.Lock()
		w.n++
		w.mu.Unlock()
	}()
	w.mu.Lock()
	wg.Wait() // want `W.mu \(taken at blocking.go:58\) is held across a WaitGroup.Wait; the goroutine started by the go statement, which would unblock it, also takes W.mu \[blocking-held\]`
	w.mu.Unlock()
}

// A goroutine that takes mu but never sends on the channel: silent.
func (w *W) other2(done chan struct{}) {
	go func() {
		w.mu.Lock()
		w.mu.Unlock()
	}()
	w.mu.Lock()
	<-done
	w.mu.Unlock()
}

// waitBounded waits for the worker under mu, but a timer case bounds the
// wait: it cannot block forever. Silent.
func (w *W) waitBounded(v int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.ch <- v:
		return true
	case <-time.After(time.Second):
		return false
	}
}

var _ = (*W).waitBounded
