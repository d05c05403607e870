package ifaceeffect

import "sync"

// A type that is its own default listener (`hc.listener = hc`, the only
// value the package ever stores there): a notification through the
// listener field is a call on the object itself, so its lock is the
// holder's.
type StatsListener interface {
	StatsUpdate(key string)
}

type HealthCheck struct {
	mu       sync.Mutex
	listener StatsListener
	healthy  map[string]bool
	notify   bool
}

func NewHealthCheck() *HealthCheck {
	hc := &HealthCheck{healthy: map[string]bool{}, notify: true}
	hc.listener = hc
	return hc
}

func (hc *HealthCheck) StatsUpdate(key string) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	delete(hc.healthy, key)
}

func (hc *HealthCheck) Remove(key string) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	hc.listener.StatsUpdate(key) // want `HealthCheck.mu locked again by HealthCheck.StatsUpdate \(at selflistener.go:27\) while held since selflistener.go:33: self-deadlock \[double-lock\]`
}

// Correct: the listener is notified after the unlock (its field may
// also be pointed at another object by a setter, so it is no
// self-pointer).
type Gateway struct {
	mu       sync.Mutex
	listener StatsListener
	routes   map[string]bool
}

func NewGateway() *Gateway {
	g := &Gateway{routes: map[string]bool{}}
	g.listener = g
	return g
}

func (g *Gateway) SetListener(l StatsListener) { g.listener = l }

func (g *Gateway) StatsUpdate(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.routes, key)
}

func (g *Gateway) Remove(key string) {
	g.mu.Lock()
	delete(g.routes, key)
	g.mu.Unlock()
	g.listener.StatsUpdate(key)
}
