package handover

import "sync"

// Goroutines using a mutex as a signal (yamux's ping-of-death test): one
// locks it and returns, on the paths that get that far, and a sibling
// unlocks it. Silent.
func Signal(fail bool) {
	b := &Buffer{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if fail {
			return
		}
		b.mu.Lock()
		b.used++
	}()
	go func() {
		defer wg.Done()
		b.mu.Unlock()
	}()
	wg.Wait()
}

// The same goroutine with no sibling to unlock it: the lock stays held.
func NoSignal(fail bool) {
	b := &Buffer{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // want `Buffer.mu taken at signal.go:\d+ is still held when the goroutine started by the go statement ends: nothing releases it, and every later Lock of it blocks \(at the implicit return, signal.go:\d+\) \[lock-leak\]`
		defer wg.Done()
		if fail {
			return
		}
		b.mu.Lock()
		b.used++
	}()
	wg.Wait()
	b.Release(1)
}
