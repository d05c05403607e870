// Project: consul (agent/proxycfg/manager.go, state.go).
//
// Bug (approximate): Manager.Close held m.mu while it stopped every proxy state
// and then waited (m.wg.Wait) for the per-proxy notify goroutines to exit. A
// notify goroutine (Manager.notifyBroadcast) that had just received a fresh
// ConfigSnapshot was in Manager.notify, which takes m.mu to fan the snapshot out
// to the xDS watchers; it could never finish, so Close (agent shutdown / config
// reload) hung forever.
// Fix: remove the states from the map under m.mu, release it, then close them
// and wait for the goroutines.
package consulproxycfg

import (
	"sync"
	"testing"
	"time"
)

type ProxyID struct {
	ServiceID string
	Partition string
}

type ConfigSnapshot struct {
	ProxyID   ProxyID
	Roots     []string
	Upstreams map[string][]string
}

// Clone makes a deep copy; snapshots for big meshes are large.
func (s *ConfigSnapshot) Clone() *ConfigSnapshot {
	time.Sleep(20 * time.Millisecond)
	c := &ConfigSnapshot{ProxyID: s.ProxyID, Roots: append([]string(nil), s.Roots...), Upstreams: map[string][]string{}}
	for k, v := range s.Upstreams {
		c.Upstreams[k] = append([]string(nil), v...)
	}
	return c
}

type UpdateEvent struct {
	CorrelationID string
	Result        []string
}

// state runs the watches for one proxy and produces snapshots.
type state struct {
	proxyID  ProxyID
	updateCh chan UpdateEvent
	snapCh   chan ConfigSnapshot
	cancelCh chan struct{}
	snap     ConfigSnapshot
}

func newState(id ProxyID) *state {
	return &state{
		proxyID:  id,
		updateCh: make(chan UpdateEvent),
		snapCh:   make(chan ConfigSnapshot, 1),
		cancelCh: make(chan struct{}),
		snap:     ConfigSnapshot{ProxyID: id, Upstreams: map[string][]string{}},
	}
}

func (s *state) Watch() <-chan ConfigSnapshot {
	go s.run()
	return s.snapCh
}

func (s *state) run() {
	defer close(s.snapCh)
	for {
		select {
		case <-s.cancelCh:
			return
		case u := <-s.updateCh:
			s.handleUpdate(u)
			select {
			case s.snapCh <- s.snap:
			case <-s.cancelCh:
				return
			}
		}
	}
}

func (s *state) handleUpdate(u UpdateEvent) {
	switch u.CorrelationID {
	case "roots":
		s.snap.Roots = u.Result
	default:
		s.snap.Upstreams[u.CorrelationID] = u.Result
	}
}

func (s *state) Close() { close(s.cancelCh) }

type Manager struct {
	mu         sync.Mutex
	proxies    map[ProxyID]*state
	watchers   map[ProxyID]map[uint64]chan *ConfigSnapshot
	maxWatchID uint64
	wg         sync.WaitGroup // notifyBroadcast goroutines
}

func NewManager() *Manager {
	return &Manager{proxies: map[ProxyID]*state{}, watchers: map[ProxyID]map[uint64]chan *ConfigSnapshot{}}
}

func (m *Manager) RegisterProxy(id ProxyID) *state {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := newState(id)
	m.proxies[id] = st
	ch := st.Watch()
	m.wg.Add(1)
	go m.notifyBroadcast(ch)
	return st
}

func (m *Manager) notifyBroadcast(ch <-chan ConfigSnapshot) {
	defer m.wg.Done()
	for snap := range ch {
		m.notify(&snap)
	}
}

func (m *Manager) notify(snap *ConfigSnapshot) {
	snapCopy := snap.Clone()
	m.mu.Lock() // DEADLOCK HERE (Close holds m.mu and waits for this goroutine)
	defer m.mu.Unlock()
	for _, ch := range m.watchers[snap.ProxyID] {
		m.deliverLatest(snapCopy, ch)
	}
}

// deliverLatest delivers the snapshot to a watcher channel, replacing a stale
// undelivered one.
func (m *Manager) deliverLatest(snap *ConfigSnapshot, ch chan *ConfigSnapshot) {
	select {
	case ch <- snap:
		return
	default:
	}
	select {
	case <-ch:
	default:
	}
	select {
	case ch <- snap:
	default:
	}
}

// Watch registers a watch on a proxy (used by the xDS server).
func (m *Manager) Watch(id ProxyID) (<-chan *ConfigSnapshot, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := make(chan *ConfigSnapshot, 1)
	if m.watchers[id] == nil {
		m.watchers[id] = map[uint64]chan *ConfigSnapshot{}
	}
	m.maxWatchID++
	idx := m.maxWatchID
	m.watchers[id][idx] = ch
	return ch, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.watchers[id], idx)
	}
}

// Close removes all state and stops all running goroutines.
func (m *Manager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, st := range m.proxies {
		st.Close()
		delete(m.proxies, id)
	}
	m.wg.Wait() // DEADLOCK HERE (waits for notifyBroadcast, which needs m.mu)
	return nil
}

func TestManagerCloseWhileNotifying(t *testing.T) {
	m := NewManager()
	id := ProxyID{ServiceID: "web-sidecar-proxy", Partition: "default"}
	st := m.RegisterProxy(id)
	_, cancelWatch := m.Watch(id)
	defer cancelWatch()

	// A blocking query for the CA roots returns.
	st.updateCh <- UpdateEvent{CorrelationID: "roots", Result: []string{"Consul CA 7"}}

	time.Sleep(5 * time.Millisecond) // agent shutdown starts while the snapshot is fanned out
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
