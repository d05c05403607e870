//go:build confine || race

package confine

import (
	"runtime"
	"sync"
	"testing"
)

func TestCurrentGoroutineIDMatchesRuntimeStack(t *testing.T) {
	if (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") && !fastGoroutineID() {
		t.Error("the g layout was not recognised: Assert fell back to runtime.Stack")
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if got, want := currentGoroutineID(), goroutineIDFromStack(); got != want {
				t.Errorf("currentGoroutineID() = %d, runtime.Stack says %d", got, want)
			}
		})
	}
	wg.Wait()
}

func TestGoroutineAlive(t *testing.T) {
	if !goroutineAlive(currentGoroutineID()) {
		t.Error("the calling goroutine is not alive")
	}
	ids := make(chan uint64)
	go func() { ids <- currentGoroutineID() }()
	id := <-ids
	for goroutineAlive(id) {
		runtime.Gosched() // it may still be on its way out
	}
	if goroutineAlive(1 << 62) {
		t.Error("a goroutine id never handed out is alive")
	}
}
