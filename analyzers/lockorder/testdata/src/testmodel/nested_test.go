package testmodel

import (
	"container/heap"
	"sync"
	"testing"
)

// A cycle one goroutine runs by itself, nested: a block's flush holds its
// lock and asks its store to rebuild its state, which read-locks every
// block again. The test starts nothing, and deadlocks anyway.

type blockStore struct {
	mu     sync.Mutex
	blocks []*block
	total  int
}

type block struct {
	mu    sync.RWMutex
	st    *blockStore
	bytes int
}

func (b *block) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st.rebuild()
}

func (s *blockStore) rebuild() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total = 0
	for _, b := range s.blocks {
		b.mu.RLock() // want `lock order inversion in test code: block.mu then blockStore.mu in block.flush .* but blockStore.mu then block.mu in blockStore.rebuild .*\[lock-order-test\]`
		s.total += b.bytes
		b.mu.RUnlock()
	}
}

func TestFlushRebuilds(t *testing.T) {
	s := &blockStore{}
	for range 2 {
		s.blocks = append(s.blocks, &block{st: s})
	}
	s.blocks[0].flush()
}

// The same locks, one order after the other on the test's goroutine, not
// one under the other: nothing waits. Silent.

type journal struct {
	mu      sync.Mutex
	entries []*entryLog
}

type entryLog struct {
	mu      sync.Mutex
	journal *journal
	n       int
}

func (e *entryLog) append() {
	e.mu.Lock()
	e.n++
	e.mu.Unlock()
	e.journal.mu.Lock()
	e.journal.mu.Unlock()
}

func (e *entryLog) seal() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.journal.mu.Lock() // the entry, then its journal
	e.journal.mu.Unlock()
}

func (j *journal) compact() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range j.entries {
		e.mu.Lock() // the journal, then each entry
		e.n = 0
		e.mu.Unlock()
	}
}

func TestSealThenCompact(t *testing.T) {
	j := &journal{}
	e := &entryLog{journal: j}
	j.entries = append(j.entries, e)
	e.append()
	e.seal()
	j.compact()
}

// A handler taken from the map a function returns, run by a goroutine the
// test starts, read-locks the gateway twice while another goroutine
// write-locks it.

type gateway struct {
	mu     sync.RWMutex
	leader string
}

func (g *gateway) handlers() map[string]func() string {
	serve := func() string {
		g.mu.RLock()
		defer g.mu.RUnlock()
		return g.leaderAddress() // want `RLock of gateway.mu by gateway.leaderAddress .* while already read-locked .*\[double-lock\]`
	}
	return map[string]func() string{"/leader": serve}
}

func (g *gateway) leaderAddress() string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.leader
}

func (g *gateway) shutdown() {
	g.mu.Lock()
	g.leader = ""
	g.mu.Unlock()
}

func TestServeWhileShuttingDown(t *testing.T) {
	g := &gateway{leader: "a"}
	serve := g.handlers()["/leader"]
	var wg sync.WaitGroup
	wg.Go(func() { _ = serve() })
	wg.Go(g.shutdown)
	wg.Wait()
}

// Callbacks copied out of their registry before they run (append to an
// empty slice literal) are still the registered ones: the watcher's
// callback takes the file's locks in the other order.

type watchers struct {
	mu  sync.Mutex
	cbs map[string][]func()
}

func (w *watchers) watch(k string, cb func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cbs[k] = append(w.cbs[k], cb)
}

func (w *watchers) notify(k string) {
	w.mu.Lock()
	cbs := append([]func(){}, w.cbs[k]...)
	w.mu.Unlock()
	for _, cb := range cbs {
		cb()
	}
}

type file struct {
	mu       sync.Mutex
	handleMu sync.Mutex
	handle   int
}

func (f *file) dirty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handleMu.Lock()
	defer f.handleMu.Unlock()
	return f.handle == 0
}

func (f *file) invalidate() {
	f.handleMu.Lock()
	defer f.handleMu.Unlock()
	f.mu.Lock() // want `lock order inversion in test code: file.mu then file.handleMu in file.dirty .* but file.handleMu then file.mu in file.invalidate .*\[lock-order-test\]`
	f.handle = 0
	f.mu.Unlock()
}

func TestEditWhileDiagnosing(t *testing.T) {
	w := &watchers{cbs: map[string][]func(){}}
	f := &file{}
	w.watch("a.go", f.invalidate)
	var wg sync.WaitGroup
	wg.Go(func() { w.notify("a.go") })
	wg.Go(func() { _ = f.dirty() })
	wg.Wait()
}

// container/heap runs the heap's Less: a goroutine that joins an
// endpoint to its sandbox takes each endpoint's lock, then the sandbox's,
// to compare them, while another refreshes the sandbox's endpoints under
// its lock.

type endpoint struct {
	mu  sync.Mutex
	sb  *sandbox
	pri int
}

func (ep *endpoint) priority() int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.sb.mu.Lock()
	defer ep.sb.mu.Unlock()
	return ep.pri + ep.sb.base
}

type epHeap []*endpoint

func (h epHeap) Len() int           { return len(h) }
func (h epHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h epHeap) Less(i, j int) bool { return h[i].priority() < h[j].priority() }
func (h *epHeap) Push(x any)        { *h = append(*h, x.(*endpoint)) }
func (h *epHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type sandbox struct {
	mu   sync.Mutex
	base int
	eps  epHeap
}

func (sb *sandbox) join(ep *endpoint) {
	heap.Push(&sb.eps, ep)
}

func (sb *sandbox) refresh() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for _, ep := range sb.eps {
		ep.mu.Lock() // want `lock order inversion in test code: endpoint.mu then sandbox.mu in endpoint.priority .* but sandbox.mu then endpoint.mu in sandbox.refresh .*\[lock-order-test\]`
		ep.pri++
		ep.mu.Unlock()
	}
}

func TestJoinWhileRefreshing(t *testing.T) {
	sb := &sandbox{}
	a := &endpoint{sb: sb}
	b := &endpoint{sb: sb, pri: 1}
	sb.join(a)
	var wg sync.WaitGroup
	wg.Go(func() { sb.join(b) })
	wg.Go(sb.refresh)
	wg.Wait()
}
