// Pattern: containerd runtime/v2 task lifecycle + events: a task moves
// strictly forward through Created -> Running -> Stopping -> Stopped ->
// Deleted and publishes each transition to its subscribers while holding
// the task lock. A subscriber gets the current state on Subscribe plus every
// later transition, i.e. at most numStates events ever, and its channel is
// sized to numStates, so publishing under the lock never blocks even though
// subscriber goroutines lock the task to read its pid and exit status.
package main

import (
	"fmt"
	"sync"
	"time"
)

type State int

const (
	Created State = iota
	Running
	Stopping
	Stopped
	Deleted
	numStates = int(Deleted) + 1
)

var stateNames = [...]string{"created", "running", "stopping", "stopped", "deleted"}

func (s State) String() string { return stateNames[s] }

type Task struct {
	mu         sync.Mutex
	id         string
	state      State
	pid        int
	exitStatus int
	subs       []chan State
}

func (t *Task) Subscribe() <-chan State {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan State, numStates)
	ch <- t.state
	if t.state == Deleted {
		close(ch)
		return ch
	}
	t.subs = append(t.subs, ch)
	return ch
}

// transition advances the state; it is a no-op for backwards moves.
func (t *Task) transition(to State, mutate func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if to <= t.state {
		return
	}
	t.state = to
	if mutate != nil {
		mutate()
	}
	for _, ch := range t.subs {
		ch <- to
		if to == Deleted {
			close(ch)
		}
	}
	if to == Deleted {
		t.subs = nil
	}
}

func (t *Task) observe(name string, ch <-chan State, wg *sync.WaitGroup) {
	defer wg.Done()
	var seen []string
	for st := range ch {
		t.mu.Lock()
		pid, exit := t.pid, t.exitStatus
		t.mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s(pid=%d,exit=%d)", st, pid, exit))
		time.Sleep(100 * time.Microsecond)
	}
	fmt.Printf("%s: %v\n", name, seen)
}

func main() {
	t := &Task{id: "redis", state: Created}
	var wg sync.WaitGroup

	wg.Add(2)
	go t.observe("cri", t.Subscribe(), &wg)
	go t.observe("metrics", t.Subscribe(), &wg)

	wg.Add(1)
	go func() {
		// A late subscriber, e.g. `ctr events` attached mid-lifecycle.
		time.Sleep(300 * time.Microsecond)
		t.observe("ctr", t.Subscribe(), &wg)
	}()

	t.transition(Running, func() { t.pid = 4242 })
	t.transition(Running, nil) // duplicate start event: ignored
	time.Sleep(500 * time.Microsecond)
	t.transition(Stopping, nil)
	t.transition(Stopped, func() { t.exitStatus = 137; t.pid = 0 })
	t.transition(Deleted, nil)

	wg.Wait()
}
