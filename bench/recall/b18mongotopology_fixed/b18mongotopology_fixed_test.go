// Project: mongodb/mongo-go-driver (x/mongo/driver/topology)
// Bug: Server.updateDescription holds s.subLock while invoking the topology
//      update callback installed with setUpdateTopologyCallback; that callback
//      (Topology.apply) takes t.serversLock. Topology.Disconnect holds
//      t.serversLock while disconnecting each server through the serverHandle
//      interface, and Server.Disconnect takes s.subLock to close the
//      subscriptions -> AB-BA between serversLock and subLock.
// Fix: Topology.Disconnect snapshots the servers under serversLock and
//      disconnects them after releasing it.

package b18mongotopology_fixed

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type ServerKind uint32

const (
	Unknown ServerKind = iota
	Standalone
	RSPrimary
	RSSecondary
)

type ServerDescription struct {
	Addr          string
	Kind          ServerKind
	HeartbeatTime time.Time
	SetVersion    uint32
}

type updateTopologyCallback func(ServerDescription) ServerDescription

// testHookRTTMonitorStop simulates the RTT monitor shutting down its
// connection, which performs network I/O.
var testHookRTTMonitorStop func()

type serverHandle interface {
	Address() string
	Disconnect(ctx context.Context) error
	Description() ServerDescription
}

type Server struct {
	address         string
	connectionstate int64
	desc            atomic.Value // holds a ServerDescription
	updateCallback  atomic.Value // holds an updateTopologyCallback

	subLock             sync.Mutex
	subscribers         map[uint64]chan ServerDescription
	currentSubscriberID uint64
	subscriptionsClosed bool
	processErrorLock    sync.Mutex
}

func NewServer(addr string) *Server {
	s := &Server{address: addr, subscribers: map[uint64]chan ServerDescription{}}
	s.desc.Store(ServerDescription{Addr: addr})
	return s
}

func (s *Server) Address() string { return s.address }

func (s *Server) Description() ServerDescription { return s.desc.Load().(ServerDescription) }

func (s *Server) setUpdateTopologyCallback(cb updateTopologyCallback) {
	s.updateCallback.Store(cb)
}

func (s *Server) Subscribe() (uint64, <-chan ServerDescription) {
	s.subLock.Lock()
	defer s.subLock.Unlock()
	ch := make(chan ServerDescription, 1)
	ch <- s.Description()
	s.currentSubscriberID++
	s.subscribers[s.currentSubscriberID] = ch
	return s.currentSubscriberID, ch
}

// updateDescription handles updating the description on the Server, notifying
// subscribers, and potentially draining the connection pool.
func (s *Server) updateDescription(desc ServerDescription) {
	s.subLock.Lock()
	defer s.subLock.Unlock()

	if cb, ok := s.updateCallback.Load().(updateTopologyCallback); ok && cb != nil {
		desc = cb(desc)
	}
	s.desc.Store(desc)
	for _, c := range s.subscribers {
		select {
		case <-c:
		default:
		}
		c <- desc
	}
}

func (s *Server) Disconnect(ctx context.Context) error {
	if !atomic.CompareAndSwapInt64(&s.connectionstate, 1, 2) {
		return nil
	}
	if testHookRTTMonitorStop != nil {
		testHookRTTMonitorStop()
	}
	s.subLock.Lock()
	for id, c := range s.subscribers {
		close(c)
		delete(s.subscribers, id)
	}
	s.subscriptionsClosed = true
	s.subLock.Unlock()
	atomic.StoreInt64(&s.connectionstate, 0)
	return nil
}

type Topology struct {
	connectionstate int64
	serversLock     sync.Mutex
	serversClosed   bool
	servers         map[string]serverHandle
	setVersion      uint32
	fsm             map[string]ServerDescription
}

func (t *Topology) addServer(s *Server) {
	t.serversLock.Lock()
	defer t.serversLock.Unlock()
	atomic.StoreInt64(&s.connectionstate, 1)
	s.setUpdateTopologyCallback(t.apply)
	t.servers[s.Address()] = s
}

// apply updates the Topology's FSM with the new server description.
func (t *Topology) apply(desc ServerDescription) ServerDescription {
	t.serversLock.Lock()
	defer t.serversLock.Unlock()
	if t.serversClosed {
		return desc
	}
	if desc.SetVersion > t.setVersion {
		t.setVersion = desc.SetVersion
	}
	t.fsm[desc.Addr] = desc
	return desc
}

// Disconnect closes the topology and all servers it owns.
func (t *Topology) Disconnect(ctx context.Context) error {
	if !atomic.CompareAndSwapInt64(&t.connectionstate, 1, 2) {
		return nil
	}
	t.serversLock.Lock()
	servers := make([]serverHandle, 0, len(t.servers))
	for addr, s := range t.servers {
		servers = append(servers, s)
		delete(t.servers, addr)
	}
	t.serversClosed = true
	t.serversLock.Unlock()

	// Disconnect outside serversLock: a server may be inside
	// updateDescription holding its subLock and calling back into apply.
	for _, s := range servers {
		_ = s.Disconnect(ctx)
	}
	atomic.StoreInt64(&t.connectionstate, 0)
	return nil
}

func TestDisconnectDuringHeartbeat(t *testing.T) {
	topo := &Topology{connectionstate: 1, servers: map[string]serverHandle{}, fsm: map[string]ServerDescription{}}
	srv := NewServer("db0.example.net:27017")
	topo.addServer(srv)
	_, updates := srv.Subscribe()

	testHookRTTMonitorStop = func() { time.Sleep(50 * time.Millisecond) }
	defer func() { testHookRTTMonitorStop = nil }()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // application shutting down the client
		defer wg.Done()
		_ = topo.Disconnect(context.Background())
	}()
	go func() { // heartbeat monitor
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		srv.updateDescription(ServerDescription{Addr: srv.Address(), Kind: RSPrimary, HeartbeatTime: time.Now(), SetVersion: 3})
	}()
	wg.Wait()
	for range updates {
	}
}
