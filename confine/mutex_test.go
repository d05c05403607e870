package confine_test

import (
	"sync"
	"testing"

	"github.com/confinelint/confinelint/confine"
)

// Whatever the build, the wrappers must still be mutexes.
func TestMutexesExclude(t *testing.T) {
	r := recordViolations(t)
	var m confine.Mutex // zero value
	rw := confine.NewRWMutex(t.Name())
	var viaMutex, viaRWMutex int
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				m.Lock()
				viaMutex++
				m.Unlock()
				rw.Lock()
				viaRWMutex++
				rw.Unlock()
				rw.RLock()
				_ = viaRWMutex
				rw.RUnlock()
			}
		})
	}
	wg.Wait()
	if viaMutex != 4000 || viaRWMutex != 4000 {
		t.Errorf("counted %d and %d, want 4000 each", viaMutex, viaRWMutex)
	}
	if !m.TryLock() || m.TryLock() {
		t.Error("Mutex.TryLock: want success when unlocked, failure when locked")
	}
	m.Unlock()
	if !rw.TryRLock() || rw.TryLock() {
		t.Error("RWMutex: want TryRLock to succeed and TryLock to fail while read-locked")
	}
	rw.RUnlock()
	r.expectNone(t)
}
