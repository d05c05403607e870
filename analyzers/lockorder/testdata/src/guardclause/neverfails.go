package guardclause

import "sync"

// A callee whose error result is nil on every return cannot fail, also
// when it is the one implementation of the interface called: the
// caller's `if err != nil { return err }` after it is no path on which
// the lock it left held (a collection that locks until Finish) leaks
// (containerd's metadata GC over its stream manager, whose fixed version
// was reported).

type Collectible interface {
	StartCollection() (*Collection, error)
}

type Collection struct {
	store *Streams
	gone  []string
}

func (c *Collection) Finish() error {
	for _, name := range c.gone {
		delete(c.store.streams, name)
	}
	c.store.mu.Unlock()
	return nil
}

type Streams struct {
	mu      sync.Mutex
	streams map[string]int
	closed  bool
}

// StartCollection locks until the collection finishes; it cannot fail.
func (s *Streams) StartCollection() (*Collection, error) {
	s.mu.Lock()
	return &Collection{store: s}, nil
}

type GC struct {
	resources map[string]Collectible
}

func (g *GC) collect() error {
	for _, r := range g.resources {
		c, err := r.StartCollection()
		if err != nil {
			return err
		}
		c.gone = append(c.gone, "idle")
		if err := c.Finish(); err != nil {
			return err
		}
	}
	return nil
}

var _ Collectible = (*Streams)(nil)
