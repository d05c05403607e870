// Package discovery is a cut-down vitess HealthCheck.
package discovery

import (
	"sync"

	"example.com/recall/vitesshc/listener"
)

// HealthCheck tracks tablet health and fans updates out to listeners.
type HealthCheck struct {
	mu        sync.RWMutex
	tablets   map[string]listener.TabletStats
	listeners []listener.StatsListener
}

// New returns a HealthCheck that is its own first listener (it keeps its
// tablet cache current through the same path as every other consumer).
func New() *HealthCheck {
	hc := &HealthCheck{tablets: make(map[string]listener.TabletStats)}
	hc.listeners = []listener.StatsListener{hc}
	return hc
}

// AddListener registers l for future updates.
func (hc *HealthCheck) AddListener(l listener.StatsListener) {
	hc.mu.Lock()
	hc.listeners = append(hc.listeners, l)
	hc.mu.Unlock()
}

// StatsUpdate implements listener.StatsListener.
func (hc *HealthCheck) StatsUpdate(ts listener.TabletStats) {
	hc.mu.Lock()
	hc.tablets[ts.Alias] = ts
	hc.mu.Unlock()
}

// RecheckServing re-evaluates every tablet against maxLag and republishes the
// ones whose serving state flipped.
func (hc *HealthCheck) RecheckServing(maxLag int) int {
	hc.mu.RLock()
	defer hc.mu.RUnlock()
	flipped := 0
	for _, ts := range hc.tablets {
		serving := ts.Lag <= maxLag
		if serving != ts.Serving {
			ts.Serving = serving
			flipped++
			listener.Broadcast(hc.listeners, ts)
		}
	}
	return flipped
}

// Serving lists the aliases currently serving.
func (hc *HealthCheck) Serving() []string {
	hc.mu.RLock()
	defer hc.mu.RUnlock()
	var out []string
	for alias, ts := range hc.tablets {
		if ts.Serving {
			out = append(out, alias)
		}
	}
	return out
}
