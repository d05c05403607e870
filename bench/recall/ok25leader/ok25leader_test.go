// Pattern: lease-based leader election. NewCandidate builds a notify closure
// that updates the candidate under its own mutex and then runs nil-checked
// onElected/onDemoted hooks; LeaseStore invokes notify while holding s.mu. The
// lock order is store.mu -> candidate.mu -> cluster.mu throughout. Each round
// spawns campaigners while holding cluster.mu, unlocks, then waits; each
// campaigner's deferred cleanup calls wg.Done before taking cluster.mu.
package ok25leader

import (
	"fmt"
	"sync"
	"testing"
)

type LeaseStore struct {
	mu      sync.Mutex
	holder  *Candidate
	term    int
	expires int64
}

type Candidate struct {
	mu        sync.Mutex
	id        string
	store     *LeaseStore
	leading   bool
	term      int
	onElected func(id string, term int)
	onDemoted func(id string, term int)
	notify    func(term int, won bool)
}

func NewCandidate(id string, store *LeaseStore, onElected, onDemoted func(string, int)) *Candidate {
	c := &Candidate{id: id, store: store, onElected: onElected, onDemoted: onDemoted}
	c.notify = func(term int, won bool) {
		c.mu.Lock()
		changed := c.leading != won
		c.leading = won
		c.term = term
		c.mu.Unlock()
		if !changed {
			return
		}
		if won {
			if c.onElected != nil {
				c.onElected(c.id, term)
			}
		} else if c.onDemoted != nil {
			c.onDemoted(c.id, term)
		}
	}
	return c
}

func (c *Candidate) IsLeader() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leading
}

func (c *Candidate) Campaign(now, ttl int64) bool { return c.store.campaign(c, now, ttl) }
func (c *Candidate) Resign()                      { c.store.release(c) }

func (s *LeaseStore) campaign(c *Candidate, now, ttl int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holder != nil && s.holder != c && now < s.expires {
		return false
	}
	if s.holder != c {
		if s.holder != nil {
			s.holder.notify(s.term, false)
		}
		s.term++
		s.holder = c
	}
	s.expires = now + ttl
	c.notify(s.term, true)
	return true
}

func (s *LeaseStore) release(c *Candidate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holder != c {
		return
	}
	s.holder = nil
	c.notify(s.term, false)
}

func (s *LeaseStore) Holder() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holder == nil {
		return "", s.term
	}
	return s.holder.id, s.term
}

type cluster struct {
	mu        sync.Mutex
	elections []int
	demotions int
	attempts  int
}

func (cl *cluster) elected(id string, term int) {
	cl.mu.Lock()
	cl.elections = append(cl.elections, term)
	cl.mu.Unlock()
}

func (cl *cluster) demoted(id string, term int) {
	cl.mu.Lock()
	cl.demotions++
	cl.mu.Unlock()
}

func (cl *cluster) round(cands []*Candidate, now int64) {
	var wg sync.WaitGroup
	cl.mu.Lock()
	for i, c := range cands {
		if (int(now)+i)%3 == 0 {
			continue
		}
		wg.Add(1)
		go func(c *Candidate) {
			defer func() {
				wg.Done()
				cl.mu.Lock()
				cl.attempts++
				cl.mu.Unlock()
			}()
			c.Campaign(now, 1)
		}(c)
	}
	cl.mu.Unlock()
	wg.Wait()
}

func TestLeaderElection(t *testing.T) {
	store := &LeaseStore{}
	cl := &cluster{}
	var cands []*Candidate
	for i := 0; i < 5; i++ {
		cands = append(cands, NewCandidate(fmt.Sprintf("node-%d", i), store, cl.elected, cl.demoted))
	}

	for now := int64(0); now < 60; now++ {
		cl.round(cands, now)
		holder, _ := store.Holder()
		leaders := 0
		for _, c := range cands {
			if c.IsLeader() {
				leaders++
				if c.id != holder {
					t.Fatalf("round %d: %s leads but holder is %q", now, c.id, holder)
				}
			}
		}
		if leaders > 1 {
			t.Fatalf("round %d: %d leaders", now, leaders)
		}
		if now%7 == 6 {
			for _, c := range cands {
				c.Resign()
			}
		}
	}

	_, term := store.Holder()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if len(cl.elections) != term || term == 0 {
		t.Fatalf("%d elections recorded, final term %d", len(cl.elections), term)
	}
	for i, tm := range cl.elections {
		if tm != i+1 {
			t.Fatalf("election %d has term %d", i, tm)
		}
	}
	if cl.demotions < term-1 || cl.attempts == 0 {
		t.Fatalf("demotions=%d attempts=%d term=%d", cl.demotions, cl.attempts, term)
	}
}
