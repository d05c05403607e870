// Project: grafana mimir / dskit (ring/basic_lifecycler.go)
// Bug: BasicLifecycler.updateInstance() held l.currState.Lock() for the whole
// KV CAS, and the CAS callback calls the BasicLifecyclerDelegate interface
// (OnRingInstanceHeartbeat). A delegate that guards its own state with a mutex
// and, from another goroutine, asks the lifecycler for its state while holding
// that mutex (GetState -> currState.RLock) closes the cycle:
// currState -> delegate.mtx versus delegate.mtx -> currState.
// Fix: run the CAS and the delegate callback without holding currState; only
// the final store of currInstanceDesc is done under the lock.

package b21mimirlifecycler_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type InstanceState int

const (
	PENDING InstanceState = iota
	JOINING
	ACTIVE
	LEAVING
)

type Tokens []uint32

type InstanceDesc struct {
	Addr      string
	Timestamp int64
	State     InstanceState
	Tokens    Tokens
	Zone      string
}

type Desc struct {
	Ingesters map[string]InstanceDesc
}

func (d *Desc) clone() *Desc {
	out := &Desc{Ingesters: make(map[string]InstanceDesc, len(d.Ingesters))}
	for k, v := range d.Ingesters {
		out.Ingesters[k] = v
	}
	return out
}

// memKV stands in for the consul/memberlist KV client.
type memKV struct {
	mu   sync.Mutex
	data map[string]*Desc
}

func (kv *memKV) CAS(key string, f func(in *Desc) (out *Desc, retry bool, err error)) error {
	kv.mu.Lock()
	in := kv.data[key]
	kv.mu.Unlock()
	if in == nil {
		in = &Desc{Ingesters: map[string]InstanceDesc{}}
	}
	time.Sleep(30 * time.Millisecond) // network round trip
	out, _, err := f(in.clone())
	if err != nil || out == nil {
		return err
	}
	kv.mu.Lock()
	kv.data[key] = out
	kv.mu.Unlock()
	return nil
}

type BasicLifecyclerDelegate interface {
	OnRingInstanceTokens(lifecycler *BasicLifecycler, tokens Tokens)
	OnRingInstanceStopping(lifecycler *BasicLifecycler)
	OnRingInstanceHeartbeat(lifecycler *BasicLifecycler, ringDesc *Desc, instanceDesc *InstanceDesc)
}

type BasicLifecyclerConfig struct {
	ID              string
	Addr            string
	Zone            string
	HeartbeatPeriod time.Duration
}

type BasicLifecycler struct {
	cfg      BasicLifecyclerConfig
	store    *memKV
	delegate BasicLifecyclerDelegate
	ringKey  string

	currState        sync.RWMutex
	currInstanceDesc *InstanceDesc
}

func NewBasicLifecycler(cfg BasicLifecyclerConfig, ringKey string, store *memKV, delegate BasicLifecyclerDelegate) *BasicLifecycler {
	return &BasicLifecycler{cfg: cfg, ringKey: ringKey, store: store, delegate: delegate,
		currInstanceDesc: &InstanceDesc{Addr: cfg.Addr, Zone: cfg.Zone, State: ACTIVE}}
}

func (l *BasicLifecycler) GetInstanceID() string { return l.cfg.ID }

func (l *BasicLifecycler) GetState() InstanceState {
	l.currState.RLock()
	defer l.currState.RUnlock()
	if l.currInstanceDesc == nil {
		return PENDING
	}
	return l.currInstanceDesc.State
}

func (l *BasicLifecycler) heartbeat() error {
	return l.updateInstance(func(r *Desc, i *InstanceDesc) bool {
		l.delegate.OnRingInstanceHeartbeat(l, r, i)
		i.Timestamp = time.Now().Unix()
		return true
	})
}

func (l *BasicLifecycler) updateInstance(update func(*Desc, *InstanceDesc) bool) error {
	var instanceDesc InstanceDesc
	err := l.store.CAS(l.ringKey, func(in *Desc) (*Desc, bool, error) {
		var ok bool
		if instanceDesc, ok = in.Ingesters[l.cfg.ID]; !ok {
			instanceDesc = InstanceDesc{Addr: l.cfg.Addr, Zone: l.cfg.Zone, State: ACTIVE}
		}
		if !update(in, &instanceDesc) {
			return nil, false, nil
		}
		in.Ingesters[l.cfg.ID] = instanceDesc
		return in, true, nil
	})
	if err != nil {
		return errors.New("failed to update instance in the ring: " + err.Error())
	}
	l.currState.Lock()
	l.currInstanceDesc = &instanceDesc
	l.currState.Unlock()
	return nil
}

// healthyInstancesDelegate tracks how many healthy instances are in the ring.
type healthyInstancesDelegate struct {
	mtx        sync.Mutex
	lifecycler *BasicLifecycler
	healthy    int
	lastState  InstanceState
}

func (d *healthyInstancesDelegate) OnRingInstanceTokens(*BasicLifecycler, Tokens) {}
func (d *healthyInstancesDelegate) OnRingInstanceStopping(*BasicLifecycler)       {}

func (d *healthyInstancesDelegate) OnRingInstanceHeartbeat(_ *BasicLifecycler, ringDesc *Desc, _ *InstanceDesc) {
	d.mtx.Lock()
	defer d.mtx.Unlock()
	n := 0
	for _, ing := range ringDesc.Ingesters {
		if ing.State == ACTIVE {
			n++
		}
	}
	d.healthy = n
}

// refresh is called by the limiter when it needs an up-to-date view.
func (d *healthyInstancesDelegate) refresh() int {
	d.mtx.Lock()
	defer d.mtx.Unlock()
	d.lastState = d.lifecycler.GetState()
	if d.lastState != ACTIVE {
		return 0
	}
	return d.healthy
}

func TestHeartbeatWhileDelegateRefreshes(t *testing.T) {
	kv := &memKV{data: map[string]*Desc{}}
	d := &healthyInstancesDelegate{}
	cfg := BasicLifecyclerConfig{ID: "distributor-1", Addr: "10.0.0.1:9095", Zone: "zone-a", HeartbeatPeriod: time.Second}
	l := NewBasicLifecycler(cfg, "distributor", kv, d)
	d.lifecycler = l

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = l.heartbeat()
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		_ = d.refresh()
	}()
	wg.Wait()
}
