// Pattern: a raft-like state machine notifies an observer callback. Apply
// events are delivered while the node mutex is held; role-change events are
// delivered after the mutex is released. The observer branches on the event
// kind and only calls the locking Status() API for role changes. The node
// uses a lock helper that returns its unlock function.
package main

import (
	"fmt"
	"os"
	"sync"
)

type EventKind int

const (
	EventApplied EventKind = iota
	EventRoleChanged
)

type Event struct {
	Kind  EventKind
	Index int
	Term  int
	Role  string
}

type Node struct {
	mu       sync.Mutex
	id       string
	role     string
	term     int
	commit   int
	log      []string
	state    map[string]string
	observer func(Event)
}

func NewNode(id string, observer func(Event)) *Node {
	return &Node{id: id, role: "follower", state: map[string]string{}, observer: observer}
}

func (n *Node) lock() func() {
	n.mu.Lock()
	return n.mu.Unlock
}

func (n *Node) Status() (role string, term, commit int) {
	defer n.lock()()
	return n.role, n.term, n.commit
}

// Propose appends and commits an entry "k=v", applying it immediately.
func (n *Node) Propose(k, v string) int {
	unlock := n.lock()
	defer unlock()
	n.log = append(n.log, k+"="+v)
	n.commit = len(n.log)
	n.state[k] = v
	if n.observer != nil {
		n.observer(Event{Kind: EventApplied, Index: n.commit, Term: n.term})
	}
	return n.commit
}

func (n *Node) BecomeLeader() {
	unlock := n.lock()
	if n.role == "leader" {
		unlock()
		return
	}
	n.term++
	n.role = "leader"
	ev := Event{Kind: EventRoleChanged, Term: n.term, Role: n.role}
	unlock()
	if n.observer != nil {
		n.observer(ev)
	}
}

func (n *Node) StepDown() {
	unlock := n.lock()
	n.role = "follower"
	ev := Event{Kind: EventRoleChanged, Term: n.term, Role: n.role}
	unlock()
	if n.observer != nil {
		n.observer(ev)
	}
}

func main() {
	var node *Node
	var obsMu sync.Mutex
	applied := 0
	var roleLog []string

	node = NewNode("n1", func(ev Event) {
		switch ev.Kind {
		case EventApplied:
			obsMu.Lock()
			applied++
			obsMu.Unlock()
		case EventRoleChanged:
			role, term, commit := node.Status()
			obsMu.Lock()
			roleLog = append(roleLog, fmt.Sprintf("%s@%d(commit=%d)", role, term, commit))
			obsMu.Unlock()
		}
	})

	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				node.Propose(fmt.Sprintf("k%d", c), fmt.Sprint(i))
			}
		}(c)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			node.BecomeLeader()
			node.StepDown()
		}
	}()
	wg.Wait()

	_, term, commit := node.Status()
	obsMu.Lock()
	defer obsMu.Unlock()
	if commit != 200 || applied != 200 || term != 10 {
		fmt.Println("unexpected state", commit, applied, term)
		os.Exit(1)
	}
	fmt.Println("commit:", commit, "term:", term, "role changes:", len(roleLog))
}
