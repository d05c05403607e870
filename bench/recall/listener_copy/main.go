// Style: like hashicorp memberlist / serf event delegates. Listeners are
// copied out under the lock and invoked after it is released, so a listener
// may call back into the cluster (Members, Subscribe) without self-deadlock.
package main

import (
	"fmt"
	"sort"
	"sync"
)

type EventType int

const (
	NodeJoin EventType = iota
	NodeLeave
)

type Listener func(ev EventType, node string)

type Cluster struct {
	mu        sync.Mutex
	members   map[string]bool
	listeners []Listener
}

func NewCluster() *Cluster {
	return &Cluster{members: make(map[string]bool)}
}

func (c *Cluster) Subscribe(l Listener) {
	c.mu.Lock()
	c.listeners = append(c.listeners, l)
	c.mu.Unlock()
}

func (c *Cluster) Members() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.members))
	for m := range c.members {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func (c *Cluster) setMember(node string, alive bool) {
	c.mu.Lock()
	ev := NodeJoin
	if alive {
		c.members[node] = true
	} else {
		delete(c.members, node)
		ev = NodeLeave
	}
	ls := make([]Listener, len(c.listeners))
	copy(ls, c.listeners)
	c.mu.Unlock()

	for _, l := range ls {
		l(ev, node)
	}
}

func main() {
	c := NewCluster()
	var seenMu sync.Mutex
	maxSize := 0
	c.Subscribe(func(ev EventType, node string) {
		n := len(c.Members()) // re-enters the cluster lock
		seenMu.Lock()
		if n > maxSize {
			maxSize = n
		}
		seenMu.Unlock()
	})
	c.Subscribe(func(ev EventType, node string) {
		if ev == NodeJoin && node == "node-3" {
			c.Subscribe(func(EventType, string) {}) // late subscriber
		}
	})
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			n := fmt.Sprintf("node-%d", i)
			c.setMember(n, true)
			if i%2 == 0 {
				c.setMember(n, false)
			}
		}(i)
	}
	wg.Wait()
	seenMu.Lock()
	fmt.Println("members:", c.Members(), "max seen >0:", maxSize > 0)
	seenMu.Unlock()
}
