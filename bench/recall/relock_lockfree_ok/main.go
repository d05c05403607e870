// lockfree_ok models logrus hooks (sirupsen/logrus, Hook.Fire(*Entry) called
// with the logger's mutex held) where the hook calls back only through
// lock-free accessors.
// CORRECT: the hook reaches the Logger through e.Logger but only calls
// Level() (an atomic load) and Defer() (a non-blocking select-send into a
// buffered channel). Neither takes Logger.mu, so firing under mu cannot
// self-deadlock. Drain is called by main after Log returns.
package main

import (
	"fmt"

	"example.com/recall/relock_lockfree_ok/logx"
)

type escalate struct{}

func (escalate) Fire(e *logx.Entry) {
	if e.Level > e.Logger.Level() { // lock-free
		e.Logger.Defer("escalated: " + e.Msg) // lock-free, non-blocking
	}
}

func main() {
	log := logx.New(1)
	log.AddHook(escalate{})

	log.Log(1, "starting")
	log.Log(3, "disk almost full")
	log.Log(0, "debug noise") // filtered

	for _, m := range log.Drain() {
		fmt.Println(m)
	}
}
