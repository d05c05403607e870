// goroutine_ok models a logrus hook that re-logs through the same logger
// asynchronously (the usual fix for hooks that must write back into
// *logrus.Logger from Fire).
// CORRECT: Fire runs with Logger.mu held, and it does call e.Logger.Log,
// which locks the same mutex, but in a NEW goroutine. That goroutine simply
// blocks until the firing Log call returns and unlocks; the firing goroutine
// never waits for it. The re-logged entry is Info level, which the hook
// ignores, so recursion stops after one hop. main waits on the WaitGroup
// only after Log has returned (mutex released).
package main

import (
	"fmt"
	"sync"

	"example.com/recall/relock_goroutine_ok/logx"
)

type alertHook struct {
	wg *sync.WaitGroup
}

func (h *alertHook) Fire(e *logx.Entry) {
	if e.Level < logx.Error {
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		e.Logger.Log(logx.Info, "alert sent for: "+e.Msg) // deferred re-entry
	}()
}

func main() {
	var wg sync.WaitGroup
	log := &logx.Logger{}
	log.AddHook(&alertHook{wg: &wg})

	log.Log(logx.Info, "boot")
	log.Log(logx.Error, "db connection refused")
	wg.Wait()
	fmt.Println("lines:", log.Len())
}
