// guard_ok models logrus-style hooks protected by a reentrancy guard (the
// pattern used by loggers such as zap's/zerolog's hook wrappers to stop a
// hook from logging through the logger that is firing it).
// CORRECT: the hook calls e.Logger.Log, which is the locking method, but
// Log first checks the atomic `firing` flag. The same goroutine stored true
// into it (program order) before calling Fire, so the nested call always
// sees true and returns before l.mu.Lock(). Other goroutines that see the
// flag also return without locking (their message is dropped: lossy, but
// never blocked). This program logs from a single goroutine.
package main

import (
	"fmt"

	"example.com/recall/relock_guard_ok/logx"
)

type echoHook struct {
	dropped int
}

func (h *echoHook) Fire(e *logx.Entry) {
	if !e.Logger.Log("echo: " + e.Msg) { // guarded: returns early, no lock
		h.dropped++
	}
}

func main() {
	log := &logx.Logger{}
	hook := &echoHook{}
	log.AddHook(hook)

	log.Log("first")
	log.Log("second")
	fmt.Println(log.Lines(), "nested calls dropped:", hook.dropped)
}
