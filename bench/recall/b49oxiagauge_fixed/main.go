// Project: streamnative/oxia (now oxia-db/oxia), the metadata store used by Apache Pulsar, mid-2023.
// Files/functions: server/shards_director.go (NewShardsDirector and its leader/follower count
// gauges, shardsDirector.GetOrCreateLeader), server/leader_controller.go (NewLeaderController
// registering its gauges), common/metrics/gauge.go (metrics.NewGauge), OpenTelemetry Go SDK
// v0.38 metric (meter.RegisterCallback, pipeline.produce, manualReader.Collect) as driven by
// the OTel Prometheus exporter's collector.Collect.
// Issue/PR: streamnative/oxia#350 "Fixed metrics gauge callback deadlock".
//
// The shards director registered gauges whose callbacks read len(leaders)/len(followers)
// under the director's read lock. The OTel SDK runs gauge callbacks from pipeline.produce
// while holding the pipeline lock, so a Prometheus scrape holds the pipeline lock and
// then wants the director's lock. A leader election runs GetOrCreateLeader, which holds
// the director's write lock while NewLeaderController opens the WAL and the KV store and
// registers the new controller's gauges; metrics.NewGauge calls meter.RegisterCallback,
// which needs the pipeline lock. Scrape and election deadlock. The fix stopped reading
// the director's maps from gauge callbacks: the counts became up-down counters updated
// where the maps change (leadersCounter/followersCounter in later code), so no metrics
// callback takes the director's lock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ---- go.opentelemetry.io/otel/sdk/metric (reduced) ----

type callback func() int64

type pipeline struct {
	sync.Mutex
	callbacks []registered
}

type registered struct {
	name string
	cb   callback
}

func (p *pipeline) addCallback(name string, cb callback) {
	p.Lock()
	defer p.Unlock()
	p.callbacks = append(p.callbacks, registered{name, cb})
}

func (p *pipeline) produce() map[string]int64 {
	p.Lock()
	defer p.Unlock()
	out := map[string]int64{}
	for _, r := range p.callbacks {
		out[r.name] = r.cb()
	}
	return out
}

type meter struct{ pipes []*pipeline }

func (m *meter) RegisterCallback(name string, cb callback) {
	for _, p := range m.pipes {
		p.addCallback(name, cb)
	}
}

type manualReader struct{ pipe *pipeline }

func (r *manualReader) Collect() map[string]int64 { return r.pipe.produce() }

// ---- oxia/common/metrics ----

var (
	pipe          = &pipeline{}
	globalMeter   = &meter{pipes: []*pipeline{pipe}}
	promCollector = &manualReader{pipe: pipe}
)

type Gauge struct{ name string }

func NewGauge(name, description, unit string, labels map[string]any, callback func() int64) *Gauge {
	globalMeter.RegisterCallback(name, func() int64 { return callback() })
	return &Gauge{name: name}
}

// ---- oxia/server ----

type WalFactory interface {
	NewWal(shard int64) (int64, error)
}

type LeaderController struct {
	sync.RWMutex
	shardId    int64
	headOffset int64
}

func NewLeaderController(shardId int64, walFactory WalFactory) (*LeaderController, error) {
	lc := &LeaderController{shardId: shardId}
	head, err := walFactory.NewWal(shardId)
	if err != nil {
		return nil, err
	}
	lc.headOffset = head
	NewGauge("oxia_server_leader_head_offset", "The current head offset", "offset",
		map[string]any{"shard": shardId}, func() int64 { return head })
	return lc, nil
}

// UpDownCounter is a synchronous instrument: no callback runs under the pipeline lock.
type UpDownCounter struct{ v atomic.Int64 }

func NewUpDownCounter(name, description, unit string, labels map[string]any) *UpDownCounter {
	return &UpDownCounter{}
}
func (c *UpDownCounter) Inc() { c.v.Add(1) }

type shardsDirector struct {
	sync.RWMutex
	leaders    map[int64]*LeaderController
	walFactory WalFactory

	leadersCounter *UpDownCounter
}

func NewShardsDirector(walFactory WalFactory) *shardsDirector {
	return &shardsDirector{leaders: map[int64]*LeaderController{}, walFactory: walFactory,
		leadersCounter: NewUpDownCounter("oxia_server_leaders_count",
			"The number of leader controllers in a server", "count", map[string]any{})}
}

func (s *shardsDirector) GetOrCreateLeader(shardId int64) (*LeaderController, error) {
	s.Lock()
	defer s.Unlock()
	if leader, ok := s.leaders[shardId]; ok {
		return leader, nil
	}
	lc, err := NewLeaderController(shardId, s.walFactory)
	if err != nil {
		return nil, err
	}
	s.leaders[shardId] = lc
	s.leadersCounter.Inc()
	return lc, nil
}

// diskWalFactory opens a WAL by replaying its segments from disk.
type diskWalFactory struct{}

func (diskWalFactory) NewWal(shard int64) (int64, error) {
	time.Sleep(100 * time.Millisecond)
	return 42, nil
}

func main() {
	sd := NewShardsDirector(diskWalFactory{})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // coordinator's NewTerm/BecomeLeader for shard 7
		defer wg.Done()
		if _, err := sd.GetOrCreateLeader(7); err != nil {
			fmt.Println(err)
		}
	}()
	go func() { // Prometheus scrape of /metrics
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		fmt.Println("scrape:", promCollector.Collect())
	}()
	wg.Wait()
	fmt.Println("done")
}
