// Project: prometheus/prometheus (scrape/manager.go), v2.5.0
// Issue: prometheus/prometheus#4992 "Prometheus scrap manager get stuck after
// deleting ServiceMonitor"; reported with a fix in PR #4894 "fix deadlock in
// scrape manager"; later releases replace the `return` with `continue`.
//
// Manager.reload takes m.mtxScrape (line 82) and walks the target sets last
// received from service discovery. When a job was just removed from the
// configuration by ApplyConfig, discovery can still deliver target groups for
// it: the scrape pool is gone and there is no scrape config for it, so reload
// logs "invalid config id" and returns (line 91) - without unlocking m.mtxScrape. The
// next ApplyConfig, updateTsets from Run, or the web UI's TargetsActive
// (line 143) blocks forever on m.mtxScrape.
package main

import (
	"fmt"
	"log"
	"reflect"
	"sync"
)

type ScrapeConfig struct {
	JobName        string
	ScrapeInterval string
}

type Config struct{ ScrapeConfigs []*ScrapeConfig }

type Group struct {
	Source  string
	Targets []string
}

type Target struct{ labels string }

type scrapePool struct {
	mtx           sync.RWMutex
	config        *ScrapeConfig
	activeTargets map[string]*Target
}

func newScrapePool(cfg *ScrapeConfig) *scrapePool {
	return &scrapePool{config: cfg, activeTargets: map[string]*Target{}}
}

// Sync converts target groups into actual scrape targets and synchronizes
// the currently running scraper with the resulting set.
func (sp *scrapePool) Sync(tgs []*Group) {
	sp.mtx.Lock()
	defer sp.mtx.Unlock()
	for _, tg := range tgs {
		for _, a := range tg.Targets {
			sp.activeTargets[a] = &Target{labels: "instance=" + a}
		}
	}
}

func (sp *scrapePool) ActiveTargets() []*Target {
	sp.mtx.RLock()
	defer sp.mtx.RUnlock()
	var tActive []*Target
	for _, t := range sp.activeTargets {
		tActive = append(tActive, t)
	}
	return tActive
}

func (sp *scrapePool) stop() {}

func (sp *scrapePool) reload(cfg *ScrapeConfig) error { sp.config = cfg; return nil }

// Manager maintains a set of scrape pools and manages start/stop cycles
// when receiving new target groups from the discovery manager.
type Manager struct {
	mtxScrape     sync.Mutex // Guards the fields below.
	scrapeConfigs map[string]*ScrapeConfig
	scrapePools   map[string]*scrapePool
	targetSets    map[string][]*Group
}

func (m *Manager) reload() {
	m.mtxScrape.Lock()
	var wg sync.WaitGroup
	for setName, groups := range m.targetSets {
		var sp *scrapePool
		existing, ok := m.scrapePools[setName]
		if !ok {
			scrapeConfig, ok := m.scrapeConfigs[setName]
			if !ok {
				log.Printf("msg=%q err=%q", "error reloading target set", "invalid config id:"+setName)
				return
			}
			sp = newScrapePool(scrapeConfig)
			m.scrapePools[setName] = sp
		} else {
			sp = existing
		}

		wg.Add(1)
		// Run the sync in parallel as these take a while and at high load can't catch up.
		go func(sp *scrapePool, groups []*Group) {
			sp.Sync(groups)
			wg.Done()
		}(sp, groups)
	}
	m.mtxScrape.Unlock()
	wg.Wait()
}

func (m *Manager) updateTsets(tsets map[string][]*Group) {
	m.mtxScrape.Lock()
	m.targetSets = tsets
	m.mtxScrape.Unlock()
}

// ApplyConfig resets the manager's target providers and job configurations as defined by the new cfg.
func (m *Manager) ApplyConfig(cfg *Config) error {
	m.mtxScrape.Lock()
	defer m.mtxScrape.Unlock()

	c := make(map[string]*ScrapeConfig)
	for _, scfg := range cfg.ScrapeConfigs {
		c[scfg.JobName] = scfg
	}
	m.scrapeConfigs = c

	// Cleanup and reload pool if config has changed.
	for name, sp := range m.scrapePools {
		if cfg, ok := m.scrapeConfigs[name]; !ok {
			sp.stop()
			delete(m.scrapePools, name)
		} else if !reflect.DeepEqual(sp.config, cfg) {
			if err := sp.reload(cfg); err != nil {
				log.Printf("msg=%q err=%v", "error reloading scrape pool", err)
			}
		}
	}
	return nil
}

// TargetsActive returns the active targets currently being scraped.
func (m *Manager) TargetsActive() map[string][]*Target {
	m.mtxScrape.Lock()
	defer m.mtxScrape.Unlock()

	targets := make(map[string][]*Target, len(m.scrapePools))
	for tset, sp := range m.scrapePools {
		targets[tset] = sp.ActiveTargets()
	}
	return targets
}

func main() {
	m := &Manager{
		scrapeConfigs: map[string]*ScrapeConfig{},
		scrapePools:   map[string]*scrapePool{},
	}
	node := &ScrapeConfig{JobName: "node", ScrapeInterval: "30s"}
	app := &ScrapeConfig{JobName: "servicemonitor/default/app/0", ScrapeInterval: "30s"}
	m.ApplyConfig(&Config{ScrapeConfigs: []*ScrapeConfig{node, app}})
	m.updateTsets(map[string][]*Group{
		"node":                         {{Source: "0", Targets: []string{"10.0.0.1:9100"}}},
		"servicemonitor/default/app/0": {{Source: "0", Targets: []string{"10.0.0.2:8080"}}},
	})
	m.reload()

	// The ServiceMonitor is deleted: the operator rewrites the configuration
	// and Prometheus reloads it before discovery drops the old target set.
	m.ApplyConfig(&Config{ScrapeConfigs: []*ScrapeConfig{node}})
	m.reload()

	// The /targets page.
	fmt.Println("active targets:", len(m.TargetsActive()))
}
