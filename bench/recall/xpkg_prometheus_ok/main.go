// prometheus_ok: modeled on prometheus/client_golang, where Registry.Gather
// calls each Collector.Collect and the collector locks its own state.
// Correct: the lock order is the same on both paths. Gather holds Registry.mu
// then Collect takes queueCollector.mu; reset goes through Registry.Update,
// so it also takes Registry.mu first and queueCollector.mu second.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/xpkg_prometheus_ok/registry"
)

type queueCollector struct {
	mu    sync.Mutex
	depth int
	reg   *registry.Registry
}

// Collect implements registry.Collector.
func (q *queueCollector) Collect(emit func(string, float64)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	emit("queue_depth", float64(q.depth))
}

func (q *queueCollector) push() {
	q.mu.Lock()
	q.depth++
	q.mu.Unlock()
}

// reset clears the queue consistently with scrapes: Registry.mu -> q.mu.
func (q *queueCollector) reset() {
	q.reg.Update(func() {
		q.mu.Lock()
		q.depth = 0
		q.mu.Unlock()
	})
}

func main() {
	reg := &registry.Registry{}
	q := &queueCollector{reg: reg}
	reg.Register(q)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(3)
		go func() { defer wg.Done(); q.push() }()
		go func() { defer wg.Done(); q.reset() }()
		go func() { defer wg.Done(); fmt.Println(reg.Gather()) }()
	}
	wg.Wait()
}
