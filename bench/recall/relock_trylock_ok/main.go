// trylock_ok models a connection/state-machine observer (e.g. looplab/fsm
// callbacks or a gRPC ClientConn state watcher) that wants a snapshot of
// the machine it is being notified about.
// CORRECT: Notify runs with Machine.mu held and re-enters the machine via
// its parameter, but only through TrySnapshot, which uses mu.TryLock() and
// gives up (ok=false) when the lock is busy. TryLock never blocks, so the
// re-entrant call cannot deadlock; the observer falls back to the from/to
// values it was given. main calls TrySnapshot again after Transition returns.
package main

import (
	"fmt"

	"example.com/recall/relock_trylock_ok/fsm"
)

type tracer struct {
	busy int
	log  []string
}

func (t *tracer) Notify(m *fsm.Machine, from, to string) {
	if hist, ok := m.TrySnapshot(); ok {
		t.log = append(t.log, fmt.Sprint(hist))
		return
	}
	t.busy++ // lock held by our own caller: give up, use the arguments
	t.log = append(t.log, from+" => "+to)
}

func main() {
	t := &tracer{}
	m := fsm.New("idle", t)
	m.Transition("connecting")
	m.Transition("ready")
	m.Transition("closed")

	hist, ok := m.TrySnapshot()
	fmt.Println(t.log, "gave up:", t.busy)
	fmt.Println(hist, ok)
}
