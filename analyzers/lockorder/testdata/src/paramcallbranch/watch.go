// Package main: a program, where a branch to a call counts as one.
package main

import "sync"

// The caller's own branch to a call that runs the function it passes is
// no condition of the double lock, as for a callee that takes the lock
// itself: once the call is made, the lock is taken again (grpc's xDS
// watcher registering its RDS handler under its own lock, the client
// delivering the first update inline).
type xdsClient struct{ watchers map[string]func(int) }

func (c *xdsClient) WatchRoute(name string, cb func(int)) {
	c.watchers[name] = cb
	cb(len(c.watchers))
}

type routeWatcher struct {
	c       *xdsClient
	mu      sync.Mutex
	closed  bool
	current string
	routes  int
}

func (w *routeWatcher) handleListener(route string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || route == w.current {
		return
	}
	w.current = route
	w.c.WatchRoute(route, w.handleRoute) // want `routeWatcher.mu locked again by xdsClient.WatchRoute -> routeWatcher.handleRoute \(at watch.go:\d+\) while held since watch.go:\d+: self-deadlock \[double-lock\]`
}

func (w *routeWatcher) handleRoute(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.routes = n
}

// handleListenerUnlocked registers after letting the lock go. Silent.
func (w *routeWatcher) handleListenerUnlocked(route string) {
	w.mu.Lock()
	if w.closed || route == w.current {
		w.mu.Unlock()
		return
	}
	w.current = route
	w.mu.Unlock()
	w.c.WatchRoute(route, w.handleRoute)
}

func main() {
	w := &routeWatcher{c: &xdsClient{watchers: map[string]func(int){}}}
	w.handleListenerUnlocked("a")
	w.handleListener("b")
}
