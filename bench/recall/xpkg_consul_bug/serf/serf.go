// Package serf is a membership layer modeled on hashicorp/serf.
package serf

import (
	"sort"
	"sync"
)

// Event is a membership change.
type Event struct {
	Kind   string
	Member string
}

// EventHandler consumes membership events.
type EventHandler interface {
	HandleEvent(e Event)
}

// Config configures a Serf instance; Handlers are called on every event.
type Config struct {
	NodeName string
	Handlers []EventHandler
}

// Serf tracks cluster members.
type Serf struct {
	mu      sync.Mutex
	conf    Config
	members map[string]string
}

// Create builds a Serf from conf.
func Create(conf Config) *Serf {
	return &Serf{conf: conf, members: map[string]string{conf.NodeName: "alive"}}
}

// HandleNodeJoin records name and notifies each configured handler in a loop
// while still holding s.mu.
func (s *Serf) HandleNodeJoin(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members[name] = "alive"
	for _, h := range s.conf.Handlers {
		h.HandleEvent(Event{Kind: "member-join", Member: name})
	}
}

// Members returns the sorted member names.
func (s *Serf) Members() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.members))
	for m := range s.members {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}
