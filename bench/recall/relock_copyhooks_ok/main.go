// copyhooks_ok models logrus-style hooks (sirupsen/logrus Entry.fireHooks
// after the fix that copies the hook set under the lock and fires it unlocked).
// CORRECT: logx.Logger.Log copies the hooks while holding mu and releases mu
// before calling Hook.Fire. The hook below calls e.Logger.Count(), which
// locks the same mutex, but at that point Log no longer holds it, so there is
// no self-deadlock.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/relock_copyhooks_ok/logx"
)

type counterHook struct {
	seen []int
}

func (h *counterHook) Fire(e *logx.Entry) {
	// Re-enters the logger, but Log has already unlocked.
	h.seen = append(h.seen, e.Logger.Count())
}

func main() {
	log := &logx.Logger{}
	hook := &counterHook{}
	log.AddHook(hook)

	var wg sync.WaitGroup
	var hmu sync.Mutex
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			hmu.Lock() // serialises access to hook.seen only
			defer hmu.Unlock()
			log.Log(fmt.Sprintf("worker %d", i))
		}(i)
	}
	wg.Wait()
	fmt.Println("lines:", log.Count(), "hook saw:", len(hook.seen))
}
