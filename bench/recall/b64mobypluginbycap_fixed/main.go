// Shape of moby/moby #40588 ("plugin: fix a double RLock bug").
//
// plugin.Store.GetAllByCap read-locked the store and then called the helper
// getAllByCap, which read-locks the same RWMutex again. A `docker plugin
// enable` (Store.SetState -> Lock) arriving between the two RLocks queues a
// writer, the second RLock waits behind it, and the writer waits for the
// first RLock: the volume-driver listing and the plugin enable both hang.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// ---- plugin/v2 ----

type Plugin struct {
	mu       sync.RWMutex
	name     string
	types    []string
	enabled  bool
	refCount int
}

func (p *Plugin) Name() string { return p.name }

func (p *Plugin) IsEnabled() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.enabled
}

func (p *Plugin) FilterByCap(capability string) (*Plugin, error) {
	want := "docker." + strings.ToLower(capability) + "/1.0"
	for _, t := range p.types {
		if t == want {
			return p, nil
		}
	}
	return nil, fmt.Errorf("plugin %q does not implement %s", p.name, capability)
}

// ---- pkg/plugingetter ----

type CompatPlugin interface{ Name() string }

type PluginGetter interface {
	GetAllByCap(capability string) ([]CompatPlugin, error)
}

// ---- plugin (store) ----

// testHook lets main order the interleaving deterministically.
var afterStoreRLock = func() {}

type Store struct {
	sync.RWMutex
	plugins map[string]*Plugin
}

func NewStore() *Store { return &Store{plugins: make(map[string]*Plugin)} }

func (ps *Store) Add(p *Plugin) {
	ps.Lock()
	defer ps.Unlock()
	ps.plugins[p.name] = p
}

// SetState sets the active state of the plugin (docker plugin enable/disable).
func (ps *Store) SetState(p *Plugin, state bool) {
	ps.Lock()
	defer ps.Unlock()
	p.mu.Lock()
	p.enabled = state
	p.mu.Unlock()
}

func (ps *Store) getAllByCap(capability string) []CompatPlugin {
	ps.RLock()
	defer ps.RUnlock()
	result := make([]CompatPlugin, 0, 1)
	for _, p := range ps.plugins {
		if p.IsEnabled() {
			if _, err := p.FilterByCap(capability); err == nil {
				result = append(result, p)
			}
		}
	}
	return result
}

// GetAllByCap returns a list of enabled plugins matching the given capability.
func (ps *Store) GetAllByCap(capability string) ([]CompatPlugin, error) {
	result := make([]CompatPlugin, 0, 1)
	if ps != nil {
		// fix (#40588): no outer RLock; getAllByCap locks the store itself
		afterStoreRLock()
		result = ps.getAllByCap(capability)
	}
	// legacy (v1) plugins would be appended here
	return result, nil
}

// ---- volume/drivers ----

type volumeDriverStore struct {
	mu sync.Mutex
	pg PluginGetter
}

func (s *volumeDriverStore) GetAllDrivers() ([]string, error) {
	plugins, err := s.pg.GetAllByCap("VolumeDriver")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, p := range plugins {
		names = append(names, p.Name())
	}
	return names, nil
}

func main() {
	store := NewStore()
	store.Add(&Plugin{name: "local-persist", types: []string{"docker.volumedriver/1.0"}, enabled: true})
	sshfs := &Plugin{name: "vieux/sshfs", types: []string{"docker.volumedriver/1.0"}}
	store.Add(sshfs)
	drivers := &volumeDriverStore{pg: store}

	readerHolds := make(chan struct{})
	afterStoreRLock = func() {
		close(readerHolds)
		time.Sleep(100 * time.Millisecond) // let `plugin enable` queue its write lock
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // docker volume ls
		defer wg.Done()
		names, _ := drivers.GetAllDrivers()
		fmt.Println("volume drivers:", names)
	}()
	go func() { // docker plugin enable vieux/sshfs
		defer wg.Done()
		<-readerHolds
		store.SetState(sshfs, true)
		fmt.Println("enabled", sshfs.Name())
	}()
	wg.Wait()
	fmt.Println("done")
}
