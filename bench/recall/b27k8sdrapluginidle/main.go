// Project: kubernetes/kubernetes (pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go)
// Issue: #133920 (1.34 regression, DRA driver unusable after the gRPC channel goes
// idle); fixed by PR #133926 (cherry-pick #133934).
//
// DRAPluginManager registers a monitoredPlugin as the gRPC stats.Handler of each
// driver's ClientConn; on *stats.ConnEnd HandleConn calls m.conn.Connect(). When
// the channel goes idle, gRPC's idleness manager runs tryEnterIdleMode with idleMu
// held -> Enforcer.EnterIdleMode (ClientConn) -> addrConn.tearDown -> stats
// handlers' HandleConn(ConnEnd) -> ClientConn.Connect -> idlenessMgr.ExitIdleMode
// -> idleMu.Lock() on the same goroutine: self-deadlock; every later RPC to the
// driver blocks on idleMu too, until the kubelet restarts.
//
// Deadlocking acquisition: Manager.ExitIdleMode `m.idleMu.Lock()` (line 53), reached
// via HandleConn's `m.conn.Connect()` (line 122); tryEnterIdleMode holds idleMu (line 47).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// google.golang.org/grpc/stats
type ConnStats interface{}
type ConnBegin struct{}
type ConnEnd struct{}
type Handler interface {
	HandleConn(context.Context, ConnStats)
}

// google.golang.org/grpc/internal/idle
type Enforcer interface {
	ExitIdleMode() error
	EnterIdleMode()
}

type Manager struct {
	enforcer     Enforcer
	timeout      time.Duration
	idleMu       sync.Mutex
	actuallyIdle bool
}

func (m *Manager) handleIdleTimeout() { m.tryEnterIdleMode() } // no RPC since the last check
func (m *Manager) tryEnterIdleMode() {
	m.idleMu.Lock()
	defer m.idleMu.Unlock()
	m.enforcer.EnterIdleMode()
	m.actuallyIdle = true
}
func (m *Manager) ExitIdleMode() error {
	m.idleMu.Lock()
	defer m.idleMu.Unlock()
	if !m.actuallyIdle {
		return nil
	}
	if err := m.enforcer.ExitIdleMode(); err != nil {
		return err
	}
	m.actuallyIdle = false
	time.AfterFunc(m.timeout, m.handleIdleTimeout) // resetIdleTimerLocked
	return nil
}

// google.golang.org/grpc: ClientConn, addrConn
type addrConn struct{ cc *ClientConn }

func (ac *addrConn) resetTransport() { // connects in its own goroutine
	for _, sh := range ac.cc.statsHandlers {
		sh.HandleConn(context.Background(), &ConnBegin{})
	}
}
func (ac *addrConn) tearDown() { // -> http2Client.Close
	for _, sh := range ac.cc.statsHandlers {
		sh.HandleConn(context.Background(), &ConnEnd{})
	}
}

type ClientConn struct {
	statsHandlers []Handler // grpc.WithStatsHandler
	idlenessMgr   *Manager
	conns         map[*addrConn]struct{} // guarded by cc.mu in grpc
}
type idler ClientConn // the idle.Enforcer view of a ClientConn

func (i *idler) EnterIdleMode() {
	for ac := range i.conns {
		ac.tearDown()
	}
	i.conns = nil
}
func (i *idler) ExitIdleMode() error {
	ac := &addrConn{cc: (*ClientConn)(i)}
	i.conns = map[*addrConn]struct{}{ac: {}}
	go ac.resetTransport()
	return nil
}

// Connect causes all subchannels to connect; Invoke leaves idle mode first (OnCallBegin).
func (cc *ClientConn) Connect()                             { _ = cc.idlenessMgr.ExitIdleMode() }
func (cc *ClientConn) Invoke(context.Context, string) error { return cc.idlenessMgr.ExitIdleMode() }

// k8s.io/kubernetes/pkg/kubelet/cm/dra/plugin
type DRAPlugin struct {
	driverName string
	conn       *ClientConn
}
type monitoredPlugin struct {
	*DRAPlugin
	pm        *DRAPluginManager
	connected bool // protected by pm.mutex
}

func (m *monitoredPlugin) HandleConn(_ context.Context, stats ConnStats) {
	connected := false
	switch stats.(type) {
	case *ConnBegin:
		connected = true
	case *ConnEnd:
		// Ask for a reconnect, else we'd miss a restart of the plugin.
		m.conn.Connect()
	default:
		return
	}
	m.pm.mutex.Lock()
	defer m.pm.mutex.Unlock()
	m.connected = connected // + pm.sync(driverName): schedule/cancel ResourceSlice wiping
}

type DRAPluginManager struct {
	withIdleTimeout time.Duration
	mutex           sync.RWMutex
	store           map[string][]*monitoredPlugin
}

func (pm *DRAPluginManager) add(driverName, endpoint string) {
	pm.mutex.Lock()
	defer pm.mutex.Unlock()
	p := &DRAPlugin{driverName: driverName}
	mp := &monitoredPlugin{DRAPlugin: p, pm: pm}
	cc := &ClientConn{statsHandlers: []Handler{mp}} // grpc.NewClient("unix:"+endpoint, grpc.WithStatsHandler(mp))
	cc.idlenessMgr = &Manager{enforcer: (*idler)(cc), timeout: pm.withIdleTimeout, actuallyIdle: true}
	p.conn = cc
	p.conn.Connect() // ensure that gRPC tries to connect
	pm.store[driverName] = append(pm.store[driverName], mp)
}
func (pm *DRAPluginManager) GetPlugin(driverName string) *DRAPlugin {
	pm.mutex.RLock()
	defer pm.mutex.RUnlock()
	return pm.store[driverName][len(pm.store[driverName])-1].DRAPlugin
}

func main() {
	pm := &DRAPluginManager{withIdleTimeout: 30 * time.Millisecond, store: map[string][]*monitoredPlugin{}}
	pm.add("gpu.example.com", "/var/lib/kubelet/plugins/gpu.example.com/dra.sock")
	time.Sleep(100 * time.Millisecond) // no pod needs the driver: the channel goes idle
	err := pm.GetPlugin("gpu.example.com").conn.Invoke(context.Background(), "/v1.DRAPlugin/NodePrepareResources")
	fmt.Println("NodePrepareResources:", err)
}
