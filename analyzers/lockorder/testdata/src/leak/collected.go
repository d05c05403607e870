package leak

import "sync"

// Locks left held on the records a loop collects, released by a later
// loop over the collection (buildkit's prune): the walk cannot pair the
// two loops' elements, and the collection holds what releases them. No
// leak. A record locked and neither unlocked nor collected on one path
// still is one.
type record struct {
	mu   sync.Mutex
	id   string
	dead bool
	refs int
}

type manager struct {
	mu      sync.Mutex
	records map[string]*record
}

func (m *manager) prune() []string {
	var toDelete []*record
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.records {
		r.mu.Lock()
		if r.refs == 0 {
			r.dead = true
			toDelete = append(toDelete, r)
			continue // leave the record locked
		}
		r.mu.Unlock()
	}
	var ids []string
	for _, r := range toDelete {
		delete(m.records, r.id)
		ids = append(ids, r.id)
		r.mu.Unlock()
	}
	return ids
}

func (m *manager) markOne(id string) bool {
	m.mu.Lock()
	r := m.records[id]
	m.mu.Unlock()
	r.mu.Lock()
	if r.dead {
		return false // want `record.mu taken at collected.go:\d+ is still held on this return path \(other paths release it\)`
	}
	r.refs++
	r.mu.Unlock()
	return true
}

// Every peer read-locked and collected, one of them let go and taken
// back around its removal (wireguard-go's SetPrivateKey): the lock is
// the collection's again, released by the last loop. No leak.
type peer struct {
	mu  sync.RWMutex
	key string
}

type device struct {
	mu    sync.Mutex
	peers map[string]*peer
}

func (p *peer) stop() {
	p.mu.Lock()
	p.key = ""
	p.mu.Unlock()
}

func (d *device) setKey(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var locked []*peer
	for _, p := range d.peers {
		p.mu.RLock()
		locked = append(locked, p)
	}
	for k, p := range d.peers {
		if p.key == key {
			p.mu.RUnlock()
			p.stop()
			delete(d.peers, k)
			p.mu.RLock()
		}
	}
	for _, p := range locked {
		p.mu.RUnlock()
	}
}
