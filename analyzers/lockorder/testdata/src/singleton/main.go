// Package main: a program that makes one object of a type has one lock
// per lock field of it, however a callee reaches the object. A callback
// whose receiver was bound where it was registered, or a value read
// through an accessor, is the object the caller holds locked.
package main

import "sync"

// An eviction callback bound to the store that made the cache.

type cache struct {
	mu      sync.Mutex
	items   map[string]int
	onEvict func(string)
}

func newCache(onEvict func(string)) *cache {
	return &cache{items: map[string]int{}, onEvict: onEvict}
}

func (c *cache) Add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[k] = len(c.items)
	if len(c.items) > 2 {
		c.evict() // want `cache.mu locked again by cache.evict -> store.spill -> cache.Len .*the program makes one cache \(at main.go:\d+\)`
	}
}

func (c *cache) evict() {
	for k := range c.items {
		delete(c.items, k)
		c.onEvict(k)
		return
	}
}

func (c *cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

type store struct {
	hot     *cache
	spilled []string
	sizes   []int
}

func newStore() *store {
	s := &store{}
	s.hot = newCache(s.spill)
	return s
}

func (s *store) spill(k string) {
	s.spilled = append(s.spilled, k)
	s.sizes = append(s.sizes, s.hot.Len())
}

// A processor that reaches the scope through the hub's accessor.

type scope struct {
	mu         sync.RWMutex
	tags       map[string]string
	processors []func()
}

func (sc *scope) AddProcessor(p func()) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.processors = append(sc.processors, p)
}

func (sc *scope) SetTag(k, v string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.tags[k] = v
}

func (sc *scope) Apply() {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	for _, p := range sc.processors {
		p() // want `Lock of scope.mu by main.func2 -> scope.SetTag .*the program makes one scope`
	}
}

type hub struct{ sc *scope }

func (h *hub) Scope() *scope { return h.sc }

// A callback whose own branch, on what it is passed, decides the take:
// the kind it re-locks on is never passed under the lock. Silent.

type event struct{ progress bool }

type feed struct {
	mu       sync.Mutex
	rev      int
	watchers []func(event)
}

func (f *feed) Watch(w func(event)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchers = append(f.watchers, w)
}

func (f *feed) Put() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rev++
	for _, w := range f.watchers {
		w(event{})
	}
}

func (f *feed) Rev() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rev
}

func (f *feed) Progress() {
	f.mu.Lock()
	ws := append([]func(event){}, f.watchers...)
	f.mu.Unlock()
	for _, w := range ws {
		w(event{progress: true})
	}
}

type mirror struct {
	f    *feed
	mu   sync.Mutex
	seen int
}

func (m *mirror) on(ev event) {
	if ev.progress {
		m.seen = m.f.Rev()
		return
	}
	m.mu.Lock()
	m.seen++
	m.mu.Unlock()
}

// Two objects of one type: the callee's may be the other one. Silent.

type shard struct {
	mu    sync.Mutex
	n     int
	peer  *shard
	onAdd func()
}

func newShard() *shard { return &shard{} }

func (s *shard) Add() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.onAdd()
}

func (s *shard) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *shard) notifyPeer() { _ = s.peer.Count() }

// One site, but in a loop: one object per turn. Silent.

type worker struct {
	mu   sync.Mutex
	jobs int
	next *worker
	done func()
}

func (w *worker) Run() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.jobs++
	w.done()
}

func (w *worker) Jobs() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.jobs
}

func (w *worker) report() { _ = w.next.Jobs() }

// A policy's eviction hook, set by the cache to a closure that calls
// the user's hook behind a test that it is set (a nil test of the
// closure's own captured cache, loaded twice, is no branch).

type policy struct {
	mu      sync.Mutex
	costs   map[int]int
	onEvict func(int)
}

func (p *policy) Add(k, cost int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for victim := range p.costs {
		delete(p.costs, victim)
		p.onEvict(victim) // want `policy.mu locked again by newLFU.func1 -> main.func1 -> lfu.Del -> policy.Del .*the program makes one policy`
		break
	}
	p.costs[k] = cost
}

func (p *policy) Del(k int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.costs, k)
}

type lfu struct {
	p         *policy
	userEvict func(int)
}

func newLFU(onEvict func(int)) *lfu {
	c := &lfu{p: &policy{costs: map[int]int{}}, userEvict: onEvict}
	c.p.onEvict = func(k int) {
		if c.userEvict != nil {
			c.userEvict(k)
		}
	}
	return c
}

func (c *lfu) Del(k int) { c.p.Del(k) }

// A lock inside an anonymous struct field (`mu struct{ sync.RWMutex;
// ... }`) is the one object's too.

type gossip struct {
	mu struct {
		sync.RWMutex
		infos map[string]int
	}
	onAdd func(key string)
}

func (g *gossip) AddInfo(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.infos[key]++
	g.onAdd(key) // want `gossip.mu locked again by storePool.update -> gossip.GetInfo .*the program makes one gossip`
}

func (g *gossip) GetInfo(key string) int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.mu.infos[key]
}

type storePool struct {
	g    *gossip
	seen int
}

func (sp *storePool) update(key string) { sp.seen += sp.g.GetInfo(key) }

func main() {
	g := &gossip{}
	g.mu.infos = map[string]int{}
	sp := &storePool{g: g}
	g.onAdd = sp.update
	g.AddInfo("node:1")

	var l *lfu
	l = newLFU(func(k int) { l.Del(k + 1) })
	l.p.Add(1, 1)

	st := newStore()
	st.hot.Add("a")

	h := &hub{sc: &scope{tags: map[string]string{}}}
	h.Scope().AddProcessor(func() { h.Scope().SetTag("env", "prod") })
	h.Scope().Apply()

	f := &feed{}
	m := &mirror{f: f}
	f.Watch(m.on)
	f.Put()
	f.Progress()

	a, b := newShard(), newShard()
	a.peer, b.peer = b, a
	a.onAdd, b.onAdd = a.notifyPeer, b.notifyPeer
	a.Add()

	var prev *worker
	for i := 0; i < 2; i++ {
		w := &worker{next: prev}
		w.done = w.report
		prev = w
	}
	if prev != nil && prev.next != nil {
		prev.Run()
	}
	runSpanStore()
	runFIFO()
	runFuncster()
	runMeshWatcher()
	runConfig()
	runHooks()
	runLessor()
	runSite()
	runEditor()
	runPageTree()
	runConfigStore()
	runSpanErrors()
	runLogServer()
	runNetStack()
	runSpanTree()
	runRingSink()
	runVault()
	runProviders()
	runMeters()
	runExpiring()
	runStateHooks()
}
