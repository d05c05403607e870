// Project: vitess (go/vt/discovery/healthcheck.go, go/vt/discovery/topology_watcher.go), release-18..21
// Issue: vitessio/vitess #16994 "Deadlock in health check and topology watcher",
// fixed by PR #16995 (backported to release-18.0 .. release-21.0)
// Fixed twin (PR #16995): loadTabletsTrigger has capacity 1 and updateHealth
// sends on it with a non-blocking select.
//
// HealthCheckImpl.updateHealth runs on a tablet's checkConn goroutine and
// holds hc.mu for its whole body. When a PRIMARY tablet reports a new type
// and no other primary is known for the shard, it asks the topology watcher
// to reload tablets right away with a blocking send on the unbuffered
// hc.loadTabletsTrigger channel (line 285), still holding hc.mu. The only
// receiver is the TopologyWatcher goroutine's select, but that goroutine may
// be inside loadTablets, which calls back into the healthcheck through the
// HealthCheck interface (tw.healthcheck.AddTablet) and AddTablet locks hc.mu
// (line 195). The watcher waits for hc.mu, updateHealth waits for the
// watcher: a lock held across a channel send whose receiver needs the lock.
//
// main lets the watcher's periodic reload block in the topo read, demotes the
// primary through its health stream (updateHealth blocks in the send), then
// lets the topo read return a new primary: the watcher calls AddTablet and
// blocks on hc.mu; main's GetTabletHealthByAlias blocks on hc.mu as well.
package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// --- topodata / query protos ---

type TabletType int

const (
	TabletType_UNKNOWN TabletType = iota
	TabletType_PRIMARY
	TabletType_REPLICA
)

type TabletAlias struct {
	Cell string
	Uid  uint32
}

type Tablet struct {
	Alias    *TabletAlias
	Hostname string
	PortMap  map[string]int32
	Keyspace string
	Shard    string
	Type     TabletType
}

type Target struct {
	Keyspace   string
	Shard      string
	TabletType TabletType
}

type RealtimeStats struct {
	HealthError           string
	ReplicationLagSeconds uint32
}

type StreamHealthResponse struct {
	Target        *Target
	Serving       bool
	RealtimeStats *RealtimeStats
}

func TabletAliasString(ta *TabletAlias) string {
	return fmt.Sprintf("%v-%010d", ta.Cell, ta.Uid)
}

// --- topo ---

type TabletInfo struct {
	*Tablet
}

// Conn is the per-cell topo connection.
type Conn interface {
	ListTablets(ctx context.Context, cell string) ([]*Tablet, error)
}

type Server struct {
	cellConn Conn
}

func (ts *Server) GetTabletsByCell(ctx context.Context, cell string) ([]*TabletInfo, error) {
	tablets, err := ts.cellConn.ListTablets(ctx, cell)
	if err != nil {
		return nil, err
	}
	res := make([]*TabletInfo, 0, len(tablets))
	for _, t := range tablets {
		res = append(res, &TabletInfo{Tablet: t})
	}
	return res, nil
}

// --- queryservice / tabletconn ---

type QueryService interface {
	StreamHealth(ctx context.Context, callback func(*StreamHealthResponse) error) error
}

type TabletDialer func(ctx context.Context, tablet *Tablet) (QueryService, error)

var dialer TabletDialer

func GetDialer() TabletDialer { return dialer }

// --- discovery/healthcheck.go ---

type KeyspaceShardTabletType string
type tabletAliasString string

func KeyFromTarget(target *Target) KeyspaceShardTabletType {
	return KeyspaceShardTabletType(fmt.Sprintf("%s.%s.%d", target.Keyspace, target.Shard, target.TabletType))
}

type TabletHealth struct {
	Conn    QueryService
	Tablet  *Tablet
	Target  *Target
	Serving bool
	Stats   *RealtimeStats
}

// HealthCheck is the interface the TopologyWatcher talks to.
type HealthCheck interface {
	AddTablet(tablet *Tablet)
	RemoveTablet(tablet *Tablet)
	ReplaceTablet(old, new *Tablet)
	GetLoadTabletsTrigger() chan struct{}
	GetTabletHealthByAlias(alias *TabletAlias) (*TabletHealth, error)
}

type HealthCheckImpl struct {
	retryDelay time.Duration
	ts         *Server
	cell       string
	// mu protects all the following fields.
	mu sync.Mutex
	// authoritative map of tabletHealth by alias
	healthByAlias map[tabletAliasString]*tabletHealthCheck
	// a map keyed by keyspace.shard.tabletType
	healthData map[KeyspaceShardTabletType]map[tabletAliasString]*TabletHealth
	// connsWG keeps track of all launched Go routines that monitor tablet connections.
	connsWG sync.WaitGroup
	// topology watchers that inform healthcheck of tablets being added and deleted
	topoWatchers []*TopologyWatcher
	// mutex to protect subscribers
	subMu sync.Mutex
	// subscribers
	subscribers map[chan *TabletHealth]struct{}
	// loadTablets trigger is used to immediately load a new primary tablet when the current one has been demoted
	loadTabletsTrigger chan struct{}
}

func NewHealthCheck(ctx context.Context, retryDelay time.Duration, topoServer *Server, localCell string, refreshInterval time.Duration) *HealthCheckImpl {
	hc := &HealthCheckImpl{
		ts:                 topoServer,
		cell:               localCell,
		retryDelay:         retryDelay,
		healthByAlias:      make(map[tabletAliasString]*tabletHealthCheck),
		healthData:         make(map[KeyspaceShardTabletType]map[tabletAliasString]*TabletHealth),
		subscribers:        make(map[chan *TabletHealth]struct{}),
		loadTabletsTrigger: make(chan struct{}, 1),
	}
	tw := NewTopologyWatcher(ctx, topoServer, hc, localCell, refreshInterval, true)
	hc.topoWatchers = append(hc.topoWatchers, tw)
	hc.init()
	return hc
}

func (hc *HealthCheckImpl) init() {
	for _, tw := range hc.topoWatchers {
		tw.Start()
	}
}

// AddTablet adds the tablet, and starts health check.
func (hc *HealthCheckImpl) AddTablet(tablet *Tablet) {
	// check whether grpc port is present on tablet, if not return
	if tablet.PortMap["grpc"] == 0 {
		return
	}

	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.healthByAlias == nil {
		// already closed.
		return
	}
	ctx, cancelFunc := context.WithCancel(context.Background())
	target := &Target{
		Keyspace:   tablet.Keyspace,
		Shard:      tablet.Shard,
		TabletType: tablet.Type,
	}
	thc := &tabletHealthCheck{
		ctx:        ctx,
		cancelFunc: cancelFunc,
		Tablet:     tablet,
		Target:     target,
	}

	// add to our datastore
	key := KeyFromTarget(target)
	tabletAlias := TabletAliasString(tablet.Alias)
	if _, ok := hc.healthByAlias[tabletAliasString(tabletAlias)]; ok {
		// We should not add a tablet that we already have
		return
	}
	hc.healthByAlias[tabletAliasString(tabletAlias)] = thc
	res := thc.SimpleCopy()
	if _, ok := hc.healthData[key]; !ok {
		hc.healthData[key] = make(map[tabletAliasString]*TabletHealth)
	}
	hc.healthData[key][tabletAliasString(tabletAlias)] = res

	hc.broadcast(res)
	hc.connsWG.Add(1)
	go thc.checkConn(hc)
}

// RemoveTablet removes the tablet, and stops the health check.
func (hc *HealthCheckImpl) RemoveTablet(tablet *Tablet) {
	hc.deleteTablet(tablet)
}

// ReplaceTablet removes the old tablet and adds the new tablet.
func (hc *HealthCheckImpl) ReplaceTablet(old, new *Tablet) {
	hc.RemoveTablet(old)
	hc.AddTablet(new)
}

func (hc *HealthCheckImpl) deleteTablet(tablet *Tablet) {
	hc.mu.Lock()
	defer hc.mu.Unlock()

	tabletAlias := tabletAliasString(TabletAliasString(tablet.Alias))
	th, ok := hc.healthByAlias[tabletAlias]
	if !ok {
		return
	}
	th.cancelHealthCheck()
	delete(hc.healthByAlias, tabletAlias)
	delete(hc.healthData[KeyFromTarget(th.Target)], tabletAlias)
}

func (hc *HealthCheckImpl) updateHealth(th *TabletHealth, prevTarget *Target, trivialUpdate bool, up bool) {
	// hc.healthByAlias is authoritative, it should be updated
	hc.mu.Lock()
	defer hc.mu.Unlock()

	tabletAlias := tabletAliasString(TabletAliasString(th.Tablet.Alias))
	// let's be sure that this tablet hasn't been deleted from the authoritative map
	if _, ok := hc.healthByAlias[tabletAlias]; !ok {
		return
	}

	targetKey := KeyFromTarget(th.Target)
	targetChanged := prevTarget.TabletType != th.Target.TabletType || prevTarget.Keyspace != th.Target.Keyspace || prevTarget.Shard != th.Target.Shard
	if targetChanged {
		// keyspace and shard are not expected to change, but just in case ...
		// move this tabletHealthCheck to the correct map
		oldTargetKey := KeyFromTarget(prevTarget)
		delete(hc.healthData[oldTargetKey], tabletAlias)
		_, ok := hc.healthData[targetKey]
		if !ok {
			hc.healthData[targetKey] = make(map[tabletAliasString]*TabletHealth)
		}

		// If the previous tablet type was primary, we need to check if the next new primary has already been assigned.
		// If no new primary has been assigned, we will trigger a `loadTablets` call to immediately redirect traffic to the new primary.
		if prevTarget.TabletType == TabletType_PRIMARY {
			if primaries := hc.healthData[oldTargetKey]; len(primaries) == 0 {
				// We don't want to block on the trigger: if a reload is
				// already pending the watcher will pick up this change too.
				select {
				case hc.loadTabletsTrigger <- struct{}{}:
				default:
				}
			}
		}
	}
	// add it to the map by target and create the map record if needed
	if _, ok := hc.healthData[targetKey]; !ok {
		hc.healthData[targetKey] = make(map[tabletAliasString]*TabletHealth)
	}
	hc.healthData[targetKey][tabletAlias] = th

	hc.broadcast(th)
}

func (hc *HealthCheckImpl) broadcast(th *TabletHealth) {
	hc.subMu.Lock()
	defer hc.subMu.Unlock()
	for c := range hc.subscribers {
		select {
		case c <- th:
		default:
		}
	}
}

// GetLoadTabletsTrigger returns a channel that is used to inform when to load tablets.
func (hc *HealthCheckImpl) GetLoadTabletsTrigger() chan struct{} {
	return hc.loadTabletsTrigger
}

// GetTabletHealthByAlias get the tablet health by alias.
func (hc *HealthCheckImpl) GetTabletHealthByAlias(alias *TabletAlias) (*TabletHealth, error) {
	hc.mu.Lock()
	defer hc.mu.Unlock()

	if hd, ok := hc.healthByAlias[tabletAliasString(TabletAliasString(alias))]; ok {
		return hd.SimpleCopy(), nil
	}
	return nil, errors.New("could not find tablet")
}

// --- discovery/tablet_health_check.go ---

type tabletHealthCheck struct {
	ctx        context.Context
	cancelFunc context.CancelFunc
	Conn       QueryService
	Tablet     *Tablet
	Target     *Target
	Serving    bool
	Stats      *RealtimeStats
	LastError  error
}

func (thc *tabletHealthCheck) SimpleCopy() *TabletHealth {
	return &TabletHealth{
		Conn:    thc.Conn,
		Tablet:  thc.Tablet,
		Target:  thc.Target,
		Serving: thc.Serving,
		Stats:   thc.Stats,
	}
}

func (thc *tabletHealthCheck) cancelHealthCheck() {
	if thc.cancelFunc != nil {
		thc.cancelFunc()
	}
}

func (thc *tabletHealthCheck) connectionLocked() (QueryService, error) {
	if thc.Conn == nil {
		conn, err := GetDialer()(thc.ctx, thc.Tablet)
		if err != nil {
			return nil, err
		}
		thc.Conn = conn
	}
	return thc.Conn, nil
}

func (thc *tabletHealthCheck) processResponse(hc *HealthCheckImpl, shr *StreamHealthResponse) error {
	select {
	case <-thc.ctx.Done():
		return thc.ctx.Err()
	default:
	}

	// Check for invalid data, better than panicking below.
	if shr.Target == nil {
		return fmt.Errorf("health stats is not valid: %v", shr)
	}

	var healthErr error
	serving := shr.Serving
	if shr.RealtimeStats.HealthError != "" {
		healthErr = fmt.Errorf("vttablet error: %v", shr.RealtimeStats.HealthError)
		serving = false
	}

	prevTarget := thc.Target
	// check whether this is a trivial update so as to update healthy map
	trivialUpdate := thc.LastError == nil && thc.Serving && shr.RealtimeStats.HealthError == "" && shr.Serving &&
		prevTarget.TabletType != TabletType_PRIMARY && prevTarget.TabletType == shr.Target.TabletType
	thc.Target = shr.Target
	thc.Stats = shr.RealtimeStats
	thc.LastError = healthErr
	thc.Serving = serving

	// notify downstream for primary change
	hc.updateHealth(thc.SimpleCopy(), prevTarget, trivialUpdate, thc.Serving)
	return nil
}

func (thc *tabletHealthCheck) checkConn(hc *HealthCheckImpl) {
	defer hc.connsWG.Done()

	conn, err := thc.connectionLocked()
	if err != nil {
		return
	}
	_ = conn.StreamHealth(thc.ctx, func(shr *StreamHealthResponse) error {
		return thc.processResponse(hc, shr)
	})
}

// --- discovery/topology_watcher.go ---

type tabletInfo struct {
	alias  string
	tablet *Tablet
}

type TopologyWatcher struct {
	// set at construction time
	topoServer          *Server
	healthcheck         HealthCheck
	cell                string
	refreshInterval     time.Duration
	refreshKnownTablets bool
	ctx                 context.Context
	cancelFunc          context.CancelFunc
	// wg keeps track of all launched Go routines.
	wg sync.WaitGroup

	// mu protects all variables below
	mu sync.Mutex
	// tablets contains a map of alias -> tabletInfo for all known tablets.
	tablets map[string]*tabletInfo
	// lastRefresh records the timestamp of the last refresh of the topology.
	lastRefresh time.Time
}

func NewTopologyWatcher(ctx context.Context, topoServer *Server, hc HealthCheck, cell string, refreshInterval time.Duration, refreshKnownTablets bool) *TopologyWatcher {
	tw := &TopologyWatcher{
		topoServer:          topoServer,
		healthcheck:         hc,
		cell:                cell,
		refreshInterval:     refreshInterval,
		refreshKnownTablets: refreshKnownTablets,
		tablets:             make(map[string]*tabletInfo),
	}
	tw.ctx, tw.cancelFunc = context.WithCancel(ctx)
	return tw
}

func (tw *TopologyWatcher) getTablets() ([]*TabletInfo, error) {
	return tw.topoServer.GetTabletsByCell(tw.ctx, tw.cell)
}

// Start starts the topology watcher.
func (tw *TopologyWatcher) Start() {
	tw.wg.Add(1)
	go func(t *TopologyWatcher) {
		defer t.wg.Done()
		ticker := time.NewTicker(t.refreshInterval)
		defer ticker.Stop()
		for {
			t.loadTablets()
			select {
			case <-t.ctx.Done():
				return
			case <-tw.healthcheck.GetLoadTabletsTrigger():
			case <-ticker.C:
			}
		}
	}(tw)
}

// Stop stops the watcher. It does not clean up the tablets added to HealthCheck.
func (tw *TopologyWatcher) Stop() {
	tw.cancelFunc()
	// wait for watch goroutine to finish.
	tw.wg.Wait()
}

func (tw *TopologyWatcher) loadTablets() {
	newTablets := make(map[string]*tabletInfo)

	// First get the list of all tablets.
	tabletInfos, err := tw.getTablets()
	if err != nil {
		return
	}

	tw.mu.Lock()
	defer tw.mu.Unlock()

	for _, tInfo := range tabletInfos {
		aliasStr := TabletAliasString(tInfo.Alias)
		if !tw.refreshKnownTablets {
			if val, ok := tw.tablets[aliasStr]; ok {
				newTablets[aliasStr] = val
				continue
			}
		}
		newTablets[aliasStr] = &tabletInfo{
			alias:  aliasStr,
			tablet: tInfo.Tablet,
		}
	}

	aliases := make([]string, 0, len(newTablets))
	for alias := range newTablets {
		aliases = append(aliases, alias)
	}
	sort.Strings(aliases)
	for _, alias := range aliases {
		newVal := newTablets[alias]
		// Trust the alias from topo and add it if it doesn't exist.
		if val, ok := tw.tablets[alias]; ok {
			// check if the host and port have changed. If yes, replace tablet.
			if val.tablet.Hostname != newVal.tablet.Hostname {
				tw.healthcheck.ReplaceTablet(val.tablet, newVal.tablet)
			}
		} else {
			// This is a new tablet record, let's add it to the HealthCheck.
			tw.healthcheck.AddTablet(newVal.tablet)
		}
	}

	for _, val := range tw.tablets {
		if _, ok := newTablets[val.alias]; !ok {
			tw.healthcheck.RemoveTablet(val.tablet)
		}
	}
	tw.tablets = newTablets
	tw.lastRefresh = time.Now()
}

// --- test doubles: an in-memory topo cell and tablet connections ---

type memoryCell struct {
	mu      sync.Mutex
	tablets []*Tablet
	calls   int
	// gate, when set, is waited on by the next ListTablets call.
	gate chan struct{}
}

func (m *memoryCell) ListTablets(ctx context.Context, cell string) ([]*Tablet, error) {
	m.mu.Lock()
	m.calls++
	gate := m.gate
	m.gate = nil
	m.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Tablet(nil), m.tablets...), nil
}

type fakeTabletConn struct {
	health  chan *StreamHealthResponse
	handled atomic.Int32
}

func (c *fakeTabletConn) StreamHealth(ctx context.Context, callback func(*StreamHealthResponse) error) error {
	for {
		select {
		case shr := <-c.health:
			if err := callback(shr); err != nil {
				return err
			}
			c.handled.Add(1)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// goroutineParked reports whether some goroutine whose stack mentions fn is
// parked in one of the given wait states.
func goroutineParked(fn string, states ...string) bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if !strings.Contains(g, fn) {
			continue
		}
		hdr := g
		if i := strings.Index(g, "\n"); i >= 0 {
			hdr = g[:i]
		}
		for _, s := range states {
			if strings.Contains(hdr, "["+s) {
				return true
			}
		}
	}
	return false
}

func waitUntil(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

func main() {
	conns := map[uint32]*fakeTabletConn{}
	var connsMu sync.Mutex
	dialer = func(ctx context.Context, tablet *Tablet) (QueryService, error) {
		connsMu.Lock()
		defer connsMu.Unlock()
		c, ok := conns[tablet.Alias.Uid]
		if !ok {
			c = &fakeTabletConn{health: make(chan *StreamHealthResponse)}
			conns[tablet.Alias.Uid] = c
		}
		return c, nil
	}
	conn := func(uid uint32) *fakeTabletConn {
		connsMu.Lock()
		defer connsMu.Unlock()
		return conns[uid]
	}

	oldPrimary := &Tablet{Alias: &TabletAlias{Cell: "zone1", Uid: 100}, Hostname: "host100", PortMap: map[string]int32{"grpc": 15991}, Keyspace: "commerce", Shard: "0", Type: TabletType_PRIMARY}
	newPrimary := &Tablet{Alias: &TabletAlias{Cell: "zone1", Uid: 101}, Hostname: "host101", PortMap: map[string]int32{"grpc": 15991}, Keyspace: "commerce", Shard: "0", Type: TabletType_PRIMARY}

	cell := &memoryCell{tablets: []*Tablet{oldPrimary}}
	ts := &Server{cellConn: cell}

	hc := NewHealthCheck(context.Background(), time.Second, ts, "zone1", 5*time.Millisecond)

	// The first load adds the old primary; wait for its health stream.
	waitUntil(func() bool { return conn(100) != nil })

	// The next periodic reload blocks in the topo read.
	gate := make(chan struct{})
	cell.mu.Lock()
	cell.gate = gate
	cell.mu.Unlock()
	waitUntil(func() bool { return goroutineParked("(*memoryCell).ListTablets", "select") })

	// The old primary is demoted (PlannedReparentShard); no primary is left.
	conn(100).health <- &StreamHealthResponse{
		Target:        &Target{Keyspace: "commerce", Shard: "0", TabletType: TabletType_REPLICA},
		Serving:       true,
		RealtimeStats: &RealtimeStats{},
	}
	waitUntil(func() bool {
		return conn(100).handled.Load() == 1 || goroutineParked("(*HealthCheckImpl).updateHealth", "chan send")
	})

	// The topo now lists the new primary; the watcher adds it.
	cell.mu.Lock()
	demoted := *oldPrimary
	demoted.Type = TabletType_REPLICA
	cell.tablets = []*Tablet{&demoted, newPrimary}
	cell.mu.Unlock()
	close(gate)

	for {
		if th, err := hc.GetTabletHealthByAlias(newPrimary.Alias); err == nil {
			fmt.Println("new primary in healthcheck:", TabletAliasString(th.Tablet.Alias))
			return
		}
		time.Sleep(time.Millisecond)
	}
}
