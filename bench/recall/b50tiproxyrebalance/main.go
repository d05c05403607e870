// Project: pingcap/tiproxy (the TiDB connection proxy), master and release-1.3, June 2025.
// Files: pkg/balance/router/router_score.go (ScoreBasedRouter.rebalanceLoop, rebalance,
// redirectConn, OnConnClosed) and pkg/proxy/backend/backend_conn_mgr.go
// (BackendConnManager.ConnInfo, Close, getEventReceiver, SetEventReceiver).
// Issue pingcap/tiproxy#816, fixed by PR pingcap/tiproxy#817 "router: avoid deadlock in rebalance".
//
// The router's rebalance loop takes the router mutex (ScoreBasedRouter embeds sync.Mutex),
// picks connections of the busiest backend and calls redirectConn for each of them. redirectConn
// built its "begin redirect connection" log fields with conn.ConnInfo(); the conn is a
// connWrapper that embeds the RedirectableConn interface, implemented by BackendConnManager,
// whose ConnInfo takes mgr.processLock. At the same time a client disconnects: the
// BackendConnManager's Close holds processLock and notifies its event receiver, which is the
// router itself (installed with SetEventReceiver when the connection was created), and
// OnConnClosed takes the router mutex. Router mutex -> processLock in the rebalance goroutine,
// processLock -> router mutex in the closing goroutine: both block forever. The fix stops calling
// BackendConnMgr.ConnInfo() from redirectConn, so the router never takes processLock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type BackendInst interface {
	Addr() string
	Healthy() bool
}

type ConnEventReceiver interface {
	OnRedirectSucceed(from, to string, conn RedirectableConn) error
	OnConnClosed(addr string, conn RedirectableConn) error
}

type RedirectableConn interface {
	SetEventReceiver(receiver ConnEventReceiver)
	Redirect(inst BackendInst) bool
	ConnectionID() uint64
	ConnInfo() []string
}

type backendWrapper struct {
	addr      string
	healthy   bool
	connScore int
	connList  []*connWrapper
}

func (b *backendWrapper) Addr() string  { return b.addr }
func (b *backendWrapper) Healthy() bool { return b.healthy }

type connWrapper struct {
	RedirectableConn
	phase              string
	redirectingBackend *backendWrapper
}

type ScoreBasedRouter struct {
	sync.Mutex
	backends map[string]*backendWrapper
}

// BackendsToBalance stands in for the score-based policy: it walks every backend's
// factors (health, memory, CPU, connection count), which takes a while on a large cluster.
func (router *ScoreBasedRouter) BackendsToBalance() (from, to *backendWrapper, reason string) {
	time.Sleep(100 * time.Millisecond)
	return router.backends["10.0.1.1:4000"], router.backends["10.0.1.2:4000"], "conn"
}

func (router *ScoreBasedRouter) rebalance() {
	router.Lock()
	defer router.Unlock()
	fromBackend, toBackend, reason := router.BackendsToBalance()
	for _, conn := range fromBackend.connList {
		if conn.phase == "redirect_notify" {
			continue
		}
		router.redirectConn(conn, fromBackend, toBackend, reason)
	}
}

func (router *ScoreBasedRouter) redirectConn(conn *connWrapper, fromBackend, toBackend *backendWrapper, reason string) {
	fields := []string{fmt.Sprintf("connID=%d", conn.ConnectionID()), "from=" + fromBackend.addr, "to=" + toBackend.addr}
	fields = append(fields, conn.ConnInfo()...)
	if conn.Redirect(toBackend) {
		fmt.Println("begin redirect connection", fields, "reason="+reason)
		fromBackend.connScore--
		toBackend.connScore++
		conn.phase = "redirect_notify"
		conn.redirectingBackend = toBackend
	}
}

func (router *ScoreBasedRouter) OnRedirectSucceed(from, to string, conn RedirectableConn) error {
	router.Lock()
	defer router.Unlock()
	return nil
}

func (router *ScoreBasedRouter) OnConnClosed(addr string, conn RedirectableConn) error {
	router.Lock()
	defer router.Unlock()
	backend := router.backends[addr]
	backend.connScore--
	fmt.Println("connection closed on", addr)
	return nil
}

type Authenticator struct{ user, dbname string }

func (a *Authenticator) ConnInfo() []string { return []string{"user=" + a.user, "db=" + a.dbname} }

type BackendConnManager struct {
	processLock   sync.Mutex
	connectionID  uint64
	backendAddr   string
	authenticator *Authenticator
	eventReceiver atomic.Pointer[ConnEventReceiver]
	closed        bool
}

func (mgr *BackendConnManager) SetEventReceiver(receiver ConnEventReceiver) {
	mgr.eventReceiver.Store(&receiver)
}

func (mgr *BackendConnManager) getEventReceiver() ConnEventReceiver {
	if r := mgr.eventReceiver.Load(); r != nil {
		return *r
	}
	return nil
}

func (mgr *BackendConnManager) ConnectionID() uint64 { return mgr.connectionID }
func (mgr *BackendConnManager) ServerAddr() string   { return mgr.backendAddr }
func (mgr *BackendConnManager) Redirect(BackendInst) bool {
	return !mgr.closed
}

func (mgr *BackendConnManager) ConnInfo() []string {
	mgr.processLock.Lock()
	var fields []string
	if mgr.authenticator != nil {
		fields = mgr.authenticator.ConnInfo()
	}
	mgr.processLock.Unlock()
	return append(fields, "backend_addr="+mgr.ServerAddr())
}

func (mgr *BackendConnManager) Close() error {
	mgr.processLock.Lock()
	defer mgr.processLock.Unlock()
	mgr.closed = true
	addr := mgr.backendAddr
	if eventReceiver := mgr.getEventReceiver(); eventReceiver != nil {
		return eventReceiver.OnConnClosed(addr, mgr)
	}
	return nil
}

func main() {
	router := &ScoreBasedRouter{backends: map[string]*backendWrapper{
		"10.0.1.1:4000": {addr: "10.0.1.1:4000", healthy: true},
		"10.0.1.2:4000": {addr: "10.0.1.2:4000", healthy: true},
	}}
	mgr := &BackendConnManager{connectionID: 7, backendAddr: "10.0.1.1:4000", authenticator: &Authenticator{user: "app", dbname: "orders"}}
	mgr.SetEventReceiver(router)
	busy := router.backends["10.0.1.1:4000"]
	busy.connList = append(busy.connList, &connWrapper{RedirectableConn: mgr, phase: "not_redirected"})
	busy.connScore = 1

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // one tick of rebalanceLoop
		defer wg.Done()
		router.rebalance()
	}()
	go func() { // the client quits while the router is scoring backends
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		_ = mgr.Close()
	}()
	wg.Wait()
	fmt.Println("done")
}
