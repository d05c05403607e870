package main

import "sync"

// Callbacks kept by address (`[]*func()`), so that registering one twice
// can be told by comparing pointers: calling `(*pf)()` calls what was
// stored through pf, the argument of each registration.

var onReload []*func()

func OnReload(callback func()) {
	for _, pf := range onReload {
		if pf == &callback {
			return
		}
	}
	onReload = append(onReload, &callback)
}

var reloadMu sync.Mutex

// reloaded runs every callback under the reload lock.
func reloaded() {
	reloadMu.Lock()
	defer reloadMu.Unlock()
	for _, pf := range onReload {
		(*pf)() // want `reloadMu locked again by bridge.handleReload`
	}
}

type bridge struct{ networks map[string]bool }

func (b *bridge) handleReload() {
	reloadMu.Lock() // the reload lock again: a self-deadlock
	defer reloadMu.Unlock()
	b.networks["x"] = true
}

// The correct counterpart: the callback takes a lock of its own.
var onRestart []*func()

func OnRestart(callback func()) { onRestart = append(onRestart, &callback) }

var restartMu sync.Mutex

func restarted() {
	restartMu.Lock()
	defer restartMu.Unlock()
	for _, pf := range onRestart {
		(*pf)()
	}
}

type proxy struct {
	mu    sync.Mutex
	ports int
}

func (p *proxy) handleRestart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ports++
}

func registerPointers() {
	b := &bridge{networks: map[string]bool{}}
	OnReload(b.handleReload)
	reloaded()
	p := &proxy{}
	OnRestart(p.handleRestart)
	restarted()
}
