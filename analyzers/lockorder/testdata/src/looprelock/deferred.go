package looprelock

import "sync"

// A defer in a loop body releases nothing until the function returns: a
// lock taken and "released" that way on every turn of an endless loop is
// taken again, still held, on the next turn.
type proxy struct {
	lock     sync.Mutex
	updates  chan string
	firewall map[string]bool
}

func (p *proxy) syncFirewall() {
	for {
		name := <-p.updates
		if name == "" {
			continue
		}
		p.lock.Lock() // want `proxy.lock is still held from the previous loop iteration \(taken at deferred.go:20; its deferred unlock runs only when the function returns\): Lock on the next iteration deadlocks \[lock-leak\]`
		defer p.lock.Unlock()
		p.firewall[name] = true
	}
}

// The correct counterparts: the lock scoped to a literal run on each
// turn; a loop that returns after its one lock; a defer per element of a
// slice, each a different lock (held together, but not taken twice).
func (p *proxy) syncFirewallScoped() {
	for {
		name := <-p.updates
		func() {
			p.lock.Lock()
			defer p.lock.Unlock()
			p.firewall[name] = true
		}()
	}
}

func (p *proxy) firstUpdate() string {
	for {
		name := <-p.updates
		if name == "" {
			continue
		}
		p.lock.Lock()
		defer p.lock.Unlock()
		p.firewall[name] = true
		return name
	}
}

type shard struct {
	mu sync.Mutex
	n  int
}

func resetAll(shards []*shard) {
	for _, s := range shards {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.n = 0
	}
}
