// Package main models Caddy's process-exit and config-unload callbacks
// (caddy.go: OnExit / exitFuncs, and the usage pool's cleanup hooks): modules
// register hooks into a slice under a mutex. When the hooks run, the registry
// copies the slice, unlocks, and only then invokes them, so a hook may freely
// call back into the registry (e.g. register a follow-up hook or read state).
package main

import (
	"fmt"
	"sort"
	"sync"
)

type exitHook struct {
	module string
	fn     func(reason string)
}

type lifecycle struct {
	mu      sync.Mutex
	hooks   []exitHook
	runs    int
	history []string
}

func (l *lifecycle) OnExit(module string, fn func(reason string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, exitHook{module: module, fn: fn})
}

func (l *lifecycle) record(entry string) {
	l.mu.Lock()
	l.history = append(l.history, entry)
	l.mu.Unlock()
}

func (l *lifecycle) HookCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.hooks)
}

// RunExitHooks runs a snapshot of the registered hooks outside the lock.
func (l *lifecycle) RunExitHooks(reason string) int {
	l.mu.Lock()
	hooks := make([]exitHook, len(l.hooks))
	copy(hooks, l.hooks)
	l.runs++
	l.mu.Unlock()

	for _, h := range hooks {
		h.fn(reason)
	}
	return len(hooks)
}

// tlsCache stands in for the certmagic cache, which flushes on exit.
type tlsCache struct {
	mu      sync.Mutex
	flushed int
}

func main() {
	lc := &lifecycle{}
	cache := &tlsCache{}

	var wg sync.WaitGroup
	modules := []string{"http", "tls", "pki", "events", "admin"}
	for _, mod := range modules {
		wg.Add(1)
		go func(mod string) {
			defer wg.Done()
			lc.OnExit(mod, func(reason string) {
				// re-enters the registry: safe because the lock is not held
				lc.record(mod + ": " + reason)
				if mod == "tls" {
					cache.mu.Lock()
					cache.flushed++
					cache.mu.Unlock()
				}
			})
		}(mod)
	}
	wg.Wait()

	// The admin module registers a follow-up hook from inside its own hook.
	lc.OnExit("admin-reload", func(reason string) {
		lc.OnExit("admin-followup", func(string) { lc.record("admin-followup") })
	})

	// Config reloads trigger hook runs concurrently with late registrations.
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			lc.RunExitHooks(fmt.Sprintf("config reload %d", r))
		}(r)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		lc.OnExit("late", func(string) {})
	}()
	wg.Wait()

	n := lc.RunExitHooks("SIGTERM")

	lc.mu.Lock()
	hist := append([]string(nil), lc.history...)
	runs := lc.runs
	lc.mu.Unlock()
	sort.Strings(hist)
	cache.mu.Lock()
	flushed := cache.flushed
	cache.mu.Unlock()

	fmt.Printf("runs=%d final hooks=%d history=%d tls flushes=%d\n", runs, n, len(hist), flushed)
	if runs != 4 || flushed != 4 || lc.HookCount() < 7 {
		panic("unexpected lifecycle state")
	}
}
