// Project: vitess (go/vt/discovery, legacy HealthCheckImpl)
// Bug: HealthCheckImpl notified its HealthCheckStatsListener while still
//
//	holding hc.mu. When no external listener is configured the healthcheck
//	acts as its own stats cache (hc.listener = hc), so removing a tablet
//	ends up in hc.StatsUpdate -> hc.updateCache -> hc.mu.Lock() through an
//	interface call: the goroutine deadlocks on its own lock.
//
// Fix: deleteConn collects the final TabletStats under hc.mu, releases the
//
//	lock, and only then notifies the listener.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Tablet struct {
	Alias    string
	Keyspace string
	Shard    string
	Hostname string
	PortMap  map[string]int32
}

type TabletStats struct {
	Key     string
	Tablet  *Tablet
	Target  string
	Up      bool
	Serving bool
	Stats   string
}

// HealthCheckStatsListener is notified about every tablet health change.
type HealthCheckStatsListener interface {
	StatsUpdate(*TabletStats)
}

// TabletRecorder is the interface the topology watcher uses.
type TabletRecorder interface {
	AddTablet(tablet *Tablet, name string)
	RemoveTablet(tablet *Tablet)
}

type tabletHealth struct {
	cancelFunc        context.CancelFunc
	latestTabletStats TabletStats
	lastResponseTime  time.Time
}

type HealthCheckImpl struct {
	retryDelay         time.Duration
	healthCheckTimeout time.Duration
	sendDownEvents     bool

	mu           sync.RWMutex
	addrToHealth map[string]*tabletHealth
	listener     HealthCheckStatsListener
	// built-in cache used when hc is its own listener
	healthyByTarget map[string][]*TabletStats
}

func NewHealthCheck(retryDelay, timeout time.Duration) *HealthCheckImpl {
	hc := &HealthCheckImpl{
		retryDelay:         retryDelay,
		healthCheckTimeout: timeout,
		sendDownEvents:     true,
		addrToHealth:       make(map[string]*tabletHealth),
		healthyByTarget:    make(map[string][]*TabletStats),
	}
	hc.listener = hc // default: act as our own stats cache
	return hc
}

func tabletKey(t *Tablet) string { return fmt.Sprintf("%s:%d", t.Hostname, t.PortMap["grpc"]) }

func (hc *HealthCheckImpl) AddTablet(tablet *Tablet, name string) {
	ctx, cancel := context.WithCancel(context.Background())
	_ = ctx // would start checkConn(ctx, ...)
	key := tabletKey(tablet)
	ts := TabletStats{Key: key, Tablet: tablet,
		Target: tablet.Keyspace + "/" + tablet.Shard, Up: true, Serving: true, Stats: name}
	hc.mu.Lock()
	hc.addrToHealth[key] = &tabletHealth{
		cancelFunc:        cancel,
		latestTabletStats: ts,
		lastResponseTime:  time.Now(),
	}
	hc.mu.Unlock()
	hc.listener.StatsUpdate(&ts)
}

func (hc *HealthCheckImpl) RemoveTablet(tablet *Tablet) {
	hc.deleteConn(tablet)
}

func (hc *HealthCheckImpl) deleteConn(tablet *Tablet) {
	hc.mu.Lock()
	defer hc.mu.Unlock()

	key := tabletKey(tablet)
	th, ok := hc.addrToHealth[key]
	if !ok {
		return
	}
	th.cancelFunc()
	delete(hc.addrToHealth, key)
	ts := th.latestTabletStats
	ts.Up = false
	hc.notifyDown(&ts) // BUG: listener invoked with hc.mu held
}

func (hc *HealthCheckImpl) notifyDown(ts *TabletStats) {
	if !hc.sendDownEvents {
		return
	}
	hc.listener.StatsUpdate(ts)
}

// StatsUpdate implements HealthCheckStatsListener for the built-in cache.
func (hc *HealthCheckImpl) StatsUpdate(ts *TabletStats) {
	hc.updateCache(ts)
}

func (hc *HealthCheckImpl) updateCache(ts *TabletStats) {
	hc.mu.Lock() // deadlock: hc.mu already held by deleteConn
	defer hc.mu.Unlock()
	list := hc.healthyByTarget[ts.Target]
	out := list[:0]
	for _, s := range list {
		if s.Key != ts.Key {
			out = append(out, s)
		}
	}
	if ts.Up && ts.Serving {
		out = append(out, ts)
	}
	hc.healthyByTarget[ts.Target] = out
}

func (hc *HealthCheckImpl) GetHealthyTabletStats(target string) []*TabletStats {
	hc.mu.RLock()
	defer hc.mu.RUnlock()
	return append([]*TabletStats(nil), hc.healthyByTarget[target]...)
}

func main() {
	hc := NewHealthCheck(5*time.Second, time.Minute)
	var rec TabletRecorder = hc
	t := &Tablet{Alias: "zone1-0000000101", Keyspace: "commerce", Shard: "0",
		Hostname: "vttablet-101", PortMap: map[string]int32{"grpc": 16002, "vt": 15002}}
	rec.AddTablet(t, "")
	fmt.Println("healthy:", len(hc.GetHealthyTabletStats("commerce/0")))

	// topology watcher notices the tablet went away
	rec.RemoveTablet(t)
	fmt.Println("healthy:", len(hc.GetHealthyTabletStats("commerce/0")))
}
