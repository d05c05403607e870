// containerd_ok: modeled on containerd's events exchange with a task event
// journal. The journal type is used in two roles: the "sink" instance is
// subscribed (Exchange.mu -> sink.mu via Handle) and the "relay" instance
// flushes its buffered entries with relay.mu held (relay.mu -> Exchange.mu).
// Correct: these are different mutex instances; the relay is never subscribed
// and the sink never flushes (its ex is nil), so no cycle on any instance.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/xpkg_containerd_ok/exchange"
)

type journal struct {
	mu      sync.Mutex
	entries []string
	ex      *exchange.Exchange
}

// Handle implements exchange.Handler.
func (j *journal) Handle(topic, payload string) {
	j.mu.Lock()
	j.entries = append(j.entries, topic+" "+payload)
	j.mu.Unlock()
}

// flush publishes buffered entries in order while holding j.mu.
func (j *journal) flush(topic string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range j.entries {
		j.ex.Publish(topic, e)
	}
	j.entries = nil
}

func main() {
	ex := exchange.New()
	sink := &journal{}
	relay := &journal{ex: ex, entries: []string{"task-start", "task-exit"}}
	ex.Subscribe("/tasks", sink)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); relay.flush("/tasks") }()
	go func() { defer wg.Done(); ex.Publish("/tasks", "task-oom") }()
	wg.Wait()
	fmt.Println("sink saw", len(sink.entries), "events")
}
