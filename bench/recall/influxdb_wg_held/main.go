// Modeled on InfluxDB 1.x tsm1.Engine: disableLevelCompactions held e.mu while
// waiting for the compaction goroutines (e.wg.Wait()), and those goroutines
// needed e.mu (ShouldCompactCache / WriteSnapshot) before they could observe
// the closed done channel, so SetCompactionsEnabled(false) during shard
// close or backup hung forever. Fixed by releasing e.mu before Wait.
package main

import (
	"sync"
	"time"
)

type Engine struct {
	mu        sync.RWMutex
	done      chan struct{}
	wg        *sync.WaitGroup
	cacheSize int
}

func (e *Engine) enableLevelCompactions() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done != nil {
		return
	}
	e.done = make(chan struct{})
	wg := new(sync.WaitGroup)
	wg.Add(1)
	e.wg = wg
	go func(quit <-chan struct{}) {
		defer wg.Done()
		e.compactCache(quit)
	}(e.done)
}

func (e *Engine) ShouldCompactCache() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cacheSize > 1024
}

func (e *Engine) WriteSnapshot() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cacheSize = 0
}

func (e *Engine) compactCache(quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		default:
		}
		if e.ShouldCompactCache() {
			e.WriteSnapshot()
		}
		time.Sleep(time.Millisecond)
	}
}

func (e *Engine) disableLevelCompactions() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done == nil {
		return
	}
	close(e.done)
	e.wg.Wait()
	e.done = nil
}

func main() {
	e := &Engine{cacheSize: 4096}
	e.enableLevelCompactions()
	time.Sleep(5 * time.Millisecond)
	e.disableLevelCompactions()
}
