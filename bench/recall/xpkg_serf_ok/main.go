// serf_ok: modeled on hashicorp/serf acting as memberlist's Delegate.
// Memberlist calls NotifyMsg/LocalState with Memberlist.mu held and those
// take serf.mu (Memberlist.mu -> serf.mu). Correct: serf never holds serf.mu
// while calling into memberlist; UserEvent records the event under serf.mu,
// unlocks, and only then calls Memberlist.Broadcast.
package main

import (
	"fmt"
	"strings"
	"sync"

	"example.com/recall/xpkg_serf_ok/memberlist"
)

type serf struct {
	mu     sync.Mutex
	ml     *memberlist.Memberlist
	events []string
}

func (s *serf) NotifyMsg(msg []byte) {
	s.mu.Lock()
	s.events = append(s.events, string(msg))
	s.mu.Unlock()
}

func (s *serf) LocalState() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []byte(strings.Join(s.events, ","))
}

// UserEvent records name locally and then gossips it, outside serf.mu.
func (s *serf) UserEvent(name string) {
	s.mu.Lock()
	s.events = append(s.events, name)
	msg := []byte(name)
	s.mu.Unlock()
	s.ml.Broadcast(msg)
}

func main() {
	s := &serf{}
	s.ml = memberlist.Create(s)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(3)
		go func() { defer wg.Done(); s.UserEvent(fmt.Sprint("deploy-", i)) }()
		go func() { defer wg.Done(); s.ml.Deliver([]byte(fmt.Sprint("remote-", i))) }()
		go func() { defer wg.Done(); _ = s.ml.PushPull() }()
	}
	wg.Wait()
	fmt.Println(len(s.events), "events")
}
