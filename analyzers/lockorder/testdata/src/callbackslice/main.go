// Package main: callbacks registered on a store, matched into a local
// slice and run by a helper that takes them variadically. The helper
// calls elements of its parameter; its caller knows what it put in the
// slice. A store pool's callback that reads the gossip back locks it
// again under AddInfo's lock (the program makes one gossip).
package main

import "sync"

type Callback func(key string)

type callback struct {
	prefix string
	method Callback
}

type infoStore struct {
	infos     map[string]int
	callbacks []*callback
}

func (is *infoStore) register(prefix string, m Callback) {
	is.callbacks = append(is.callbacks, &callback{prefix: prefix, method: m})
}

func (is *infoStore) add(key string) {
	is.infos[key]++
	var matches []Callback
	for _, cb := range is.callbacks {
		if len(key) >= len(cb.prefix) && key[:len(cb.prefix)] == cb.prefix {
			matches = append(matches, cb.method)
		}
	}
	is.run(key, matches...)
}

func (is *infoStore) run(key string, fns ...Callback) {
	for _, f := range fns {
		f(key)
	}
}

type gossip struct {
	mu sync.RWMutex
	is *infoStore
}

func (g *gossip) Register(prefix string, m Callback) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.is.register(prefix, m)
}

func (g *gossip) AddInfo(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.is.add(key) // want `gossip.mu locked again by infoStore.add -> infoStore.run -> storePool.update -> gossip.Get .*the program makes one gossip`
}

func (g *gossip) Get(key string) int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.is.infos[key]
}

type storePool struct {
	g    *gossip
	seen int
}

func (sp *storePool) update(key string) { sp.seen = sp.g.Get(key) }

// A callback that only counts, run the same way: silent.
type counter struct{ n int }

func (c *counter) bump(string) { c.n++ }

func main() {
	g := &gossip{is: &infoStore{infos: map[string]int{}}}
	sp := &storePool{g: g}
	c := &counter{}
	g.Register("store:", sp.update)
	g.Register("node:", c.bump)
	g.AddInfo("store:1")
	registerPointers()
}
