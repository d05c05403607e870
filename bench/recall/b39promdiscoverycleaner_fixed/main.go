// prometheus/prometheus, discovery/manager.go (Manager.ApplyConfig,
// Manager.cleaner, Manager.updater, Manager.allGroups). Fixed by PR #16587
// "discovery: Try fixing potential deadlocks in discovery" (Prometheus hanging
// on shutdown/reload with discovery.Manager stuck in cleaner and ApplyConfig).
//
// A config reload runs ApplyConfig, which for every provider that is kept
// write-locks prov.mu and then, still holding it, takes m.targetsMtx
// (line 144) to move the provider's targets to its new subscriptions.
// Meanwhile the provider's updater goroutine returns because its context was
// cancelled (shutdown) and runs its deferred cleaner, which takes
// m.targetsMtx first and then read-locks p.mu (line 195); allGroups, run by
// the sender, nests the two the same way. Provider.mu -> targetsMtx against
// targetsMtx -> Provider.mu: ApplyConfig and cleaner wait for each other and
// the discovery manager (and with it the reload and the shutdown) hangs. The
// fix takes p.mu before targetsMtx in cleaner and allGroups.
//
// FIXED TWIN: same program with the project's fix applied; the line numbers
// above refer to the unfixed probe in ../b39promdiscoverycleaner/main.go.
package main

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"
)

type Group struct {
	Targets []map[string]string
	Source  string
}

// Discoverer provides information about target groups.
type Discoverer interface {
	Run(ctx context.Context, up chan<- []*Group)
}

type Config interface {
	Name() string
	NewDiscoverer() (Discoverer, error)
}

type Configs []Config

type StaticConfig []*Group

func (StaticConfig) Name() string { return "static" }
func (c StaticConfig) NewDiscoverer() (Discoverer, error) {
	return &StaticProvider{TargetGroups: c}, nil
}

// StaticProvider holds a list of target groups that never change.
type StaticProvider struct {
	TargetGroups []*Group
}

// Run implements the Worker interface.
func (sd *StaticProvider) Run(ctx context.Context, ch chan<- []*Group) {
	select {
	case ch <- sd.TargetGroups:
	case <-ctx.Done():
	}
	close(ch)
}

type poolKey struct {
	setName  string
	provider string
}

// Provider holds a Discoverer instance, its configuration, cancel func and its subscribers.
type Provider struct {
	name   string
	d      Discoverer
	config interface{}

	cancel context.CancelFunc
	// done should be called after cleaning up resources associated with cancelled provider.
	done func()

	mu   sync.RWMutex
	subs map[string]struct{}

	// newSubs is used to temporary store subs to be used upon config reload completion.
	newSubs map[string]struct{}
}

// IsStarted return true if Discoverer is started.
func (p *Provider) IsStarted() bool {
	return p.cancel != nil
}

// Manager maintains a set of discovery providers and sends each update to a map channel.
type Manager struct {
	mtx sync.RWMutex
	ctx context.Context

	targets    map[poolKey]map[string]*Group
	targetsMtx sync.Mutex

	providers    []*Provider
	syncCh       chan map[string][]*Group
	triggerSend  chan struct{}
	lastProvider uint
}

func NewManager(ctx context.Context) *Manager {
	return &Manager{
		ctx:         ctx,
		targets:     make(map[poolKey]map[string]*Group),
		syncCh:      make(chan map[string][]*Group),
		triggerSend: make(chan struct{}, 1),
	}
}

// ApplyConfig checks if discovery provider with supplied config is already running and keeps them as is.
// Remaining providers are then stopped and new required providers are started using the provided config.
func (m *Manager) ApplyConfig(cfg map[string]Configs) error {
	m.mtx.Lock()
	defer m.mtx.Unlock()

	for name, scfg := range cfg {
		m.registerProviders(scfg, name)
	}

	var (
		wg           sync.WaitGroup
		newProviders []*Provider
	)
	for _, prov := range m.providers {
		// Cancel obsolete providers.
		if len(prov.newSubs) == 0 {
			wg.Add(1)
			prov.done = func() {
				wg.Done()
			}
			prov.cancel()
			continue
		}
		newProviders = append(newProviders, prov)
		// refTargets keeps reference targets used to populate new subs' targets as they should be the same.
		var refTargets map[string]*Group
		prov.mu.Lock()

		time.Sleep(50 * time.Millisecond) // probe: widen the window between the two locks
		m.targetsMtx.Lock()
		for s := range prov.subs {
			refTargets = m.targets[poolKey{s, prov.name}]
			// Remove obsolete subs' targets.
			if _, ok := prov.newSubs[s]; !ok {
				delete(m.targets, poolKey{s, prov.name})
			}
		}
		// Set targets for new subs.
		for s := range prov.newSubs {
			if l := len(refTargets); l > 0 {
				m.targets[poolKey{s, prov.name}] = make(map[string]*Group, l)
				for k, v := range refTargets {
					m.targets[poolKey{s, prov.name}][k] = v
				}
			}
		}
		m.targetsMtx.Unlock()

		prov.subs = prov.newSubs
		prov.newSubs = map[string]struct{}{}
		prov.mu.Unlock()
		if !prov.IsStarted() {
			m.startProvider(m.ctx, prov)
		}
	}
	if len(m.providers) > 0 {
		select {
		case m.triggerSend <- struct{}{}:
		default:
		}
	}
	m.providers = newProviders
	wg.Wait()

	return nil
}

func (m *Manager) startProvider(ctx context.Context, p *Provider) {
	ctx, cancel := context.WithCancel(ctx)
	updates := make(chan []*Group)

	p.cancel = cancel

	go p.d.Run(ctx, updates)
	go m.updater(ctx, p, updates)
}

// cleaner cleans resources associated with provider.
func (m *Manager) cleaner(p *Provider) {
	p.mu.RLock()
	m.targetsMtx.Lock()
	for s := range p.subs {
		delete(m.targets, poolKey{s, p.name})
	}
	m.targetsMtx.Unlock()
	p.mu.RUnlock()
	if p.done != nil {
		p.done()
	}
}

func (m *Manager) updater(ctx context.Context, p *Provider, updates chan []*Group) {
	// Ensure targets from this provider are cleaned up.
	defer m.cleaner(p)
	for {
		select {
		case <-ctx.Done():
			return
		case tgs, ok := <-updates:
			if !ok {
				// Wait for provider cancellation to ensure targets are cleaned up when expected.
				<-ctx.Done()
				return
			}

			p.mu.RLock()
			for s := range p.subs {
				m.updateGroup(poolKey{setName: s, provider: p.name}, tgs)
			}
			p.mu.RUnlock()

			select {
			case m.triggerSend <- struct{}{}:
			default:
			}
		}
	}
}

func (m *Manager) updateGroup(poolKey poolKey, tgs []*Group) {
	m.targetsMtx.Lock()
	defer m.targetsMtx.Unlock()

	if _, ok := m.targets[poolKey]; !ok {
		m.targets[poolKey] = make(map[string]*Group)
	}
	for _, tg := range tgs {
		if tg != nil {
			m.targets[poolKey][tg.Source] = tg
		}
	}
}

func (m *Manager) allGroups() map[string][]*Group {
	tSets := map[string][]*Group{}

	m.mtx.RLock()
	for _, p := range m.providers {
		p.mu.RLock()
		m.targetsMtx.Lock()
		for s := range p.subs {
			if _, ok := tSets[s]; !ok {
				tSets[s] = []*Group{}
			}
			for _, tg := range m.targets[poolKey{s, p.name}] {
				tSets[s] = append(tSets[s], tg)
			}
		}
		m.targetsMtx.Unlock()
		p.mu.RUnlock()
	}
	m.mtx.RUnlock()
	return tSets
}

// registerProviders returns a number of failed SD config.
func (m *Manager) registerProviders(cfgs Configs, setName string) int {
	failed := 0
	for _, cfg := range cfgs {
		found := false
		for _, p := range m.providers {
			if reflect.DeepEqual(cfg, p.config) {
				p.newSubs[setName] = struct{}{}
				found = true
				break
			}
		}
		if found {
			continue
		}
		d, err := cfg.NewDiscoverer()
		if err != nil {
			failed++
			continue
		}
		m.providers = append(m.providers, &Provider{
			name:    fmt.Sprintf("%s/%d", cfg.Name(), m.lastProvider),
			d:       d,
			config:  cfg,
			newSubs: map[string]struct{}{setName: {}},
		})
		m.lastProvider++
	}
	return failed
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	m := NewManager(ctx)
	cfg := map[string]Configs{"node": {StaticConfig{{Source: "0", Targets: []map[string]string{{"__address__": "localhost:9100"}}}}}}
	if err := m.ApplyConfig(cfg); err != nil {
		panic(err)
	}
	time.Sleep(20 * time.Millisecond)
	fmt.Println("groups:", len(m.allGroups()["node"]))

	// SIGHUP reload with the same SD config, racing with shutdown.
	reloaded := make(chan struct{})
	go func() {
		_ = m.ApplyConfig(cfg)
		close(reloaded)
	}()
	time.Sleep(20 * time.Millisecond)
	cancel() // the discovery manager's context is cancelled: updaters run their cleaner

	<-reloaded
	fmt.Println("reload finished")
}
