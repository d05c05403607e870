package guardclause

import (
	"errors"
	"sync"
)

// A take three calls down, each call after an error check: the bound on
// conditional steps does not count the error returns, which leave the
// success path taking the lock for sure (cockroach's gossip visitor,
// GossipStore -> AddInfoProto -> AddInfo, against SetStorage's order).
type Gossip struct {
	mu    sync.Mutex
	infos map[string][]byte
	store *Stores
}

func encode(v string) ([]byte, error) {
	if v == "" {
		return nil, errors.New("nothing to encode")
	}
	return []byte(v), nil
}

func (g *Gossip) AddInfo(key string, b []byte) error {
	if len(b) == 0 {
		return errors.New("empty info")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.infos[key] = b
	return nil
}

func (g *Gossip) AddInfoProto(key, v string) error {
	b, err := encode(v)
	if err != nil {
		return err
	}
	return g.AddInfo(key, b)
}

type Store struct {
	id     string
	gossip *Gossip
}

func (s *Store) GossipStore() error {
	if s.id == "" {
		return errors.New("store not started")
	}
	return s.gossip.AddInfoProto("store:"+s.id, s.id)
}

type Stores struct {
	mu     sync.Mutex
	stores []*Store
}

func (ls *Stores) VisitStores(visit func(*Store) error) error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, s := range ls.stores {
		if err := visit(s); err != nil {
			return err
		}
	}
	return nil
}

func (ls *Stores) Count() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.stores)
}

func (g *Gossip) SetStorage(ls *Stores) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.store = ls
	_ = ls.Count() // want `lock order inversion: Stores.mu then Gossip.mu in Stores.VisitStores \(chain.go:\d+ -> chain.go:\d+ via gossipStores.func1 -> Store.GossipStore -> Gossip.AddInfoProto -> Gossip.AddInfo, passed at chain.go:\d+\) but Gossip.mu then Stores.mu in Gossip.SetStorage \(chain.go:\d+ -> chain.go:\d+ via Stores.Count\) \[lock-order\]`
}

func gossipStores(ls *Stores) error {
	return ls.VisitStores(func(s *Store) error {
		return s.GossipStore()
	})
}

func run(g *Gossip, ls *Stores) {
	go g.SetStorage(ls)
	go gossipStores(ls)
}
