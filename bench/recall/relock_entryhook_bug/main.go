// entryhook_bug models the classic sirupsen/logrus hook self-deadlock: a
// Hook's Fire(*Entry) logs through entry.Logger while logrus still holds
// Logger.mu around fireHooks.
// BUGGY: logx.Logger.Log locks l.mu and calls Hook.Fire under it
// (entryhook_bug/logx/logx.go:36). metricsHook.Fire unconditionally calls
// e.Logger.Log, which locks the same sync.Mutex again on the same goroutine.
// sync.Mutex is not reentrant, so the very first log.Log call deadlocks.
// The buggy hook is registered at entryhook_bug/main.go:30 (log.AddHook).
package main

import (
	"fmt"

	"example.com/recall/relock_entryhook_bug/logx"
)

type metricsHook struct {
	count int
}

func (h *metricsHook) Fire(e *logx.Entry) error {
	h.count++
	// Re-enters the same Logger through the Entry back-pointer.
	e.Logger.Log(fmt.Sprintf("metrics: %d entries", h.count))
	return nil
}

func main() {
	log := &logx.Logger{}
	log.AddHook(&metricsHook{}) // registers the re-entrant hook

	log.Log("service starting") // deadlocks here
	fmt.Println("lines:", log.Len())
}
