// Project: mongodb/mongo-go-driver (x/mongo/driver/topology/topology.go, server.go), v1.x, approximate (2019-2021).
// Bug: Topology.apply, the update callback every Server's monitoring goroutine calls with its new description, holds t.serversLock while applying the FSM and, for every server the new topology no longer contains, synchronously calls Server.Disconnect, which waits on closewg for that server's monitoring goroutine; if that goroutine has just finished its own heartbeat it is blocked calling the same callback, t.apply, on t.serversLock, so neither can proceed (the fix disconnects removed servers in a separate goroutine).
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type Address string

// description.Server / description.Topology, trimmed.
type ServerDesc struct {
	Addr  Address
	Kind  string // "Unknown", "RSPrimary", "RSSecondary"
	Hosts []Address
}

type TopologyDesc struct{ Servers []ServerDesc }

type TopologyDiff struct{ Removed []ServerDesc }

// DiffTopology, reduced here to the servers that left the topology.
func DiffTopology(old, new TopologyDesc) TopologyDiff {
	var d TopologyDiff
	for _, s := range old.Servers {
		if _, ok := (&fsm{new}).findServer(s.Addr); !ok {
			d.Removed = append(d.Removed, s)
		}
	}
	return d
}

type fsm struct{ TopologyDesc }

func (f *fsm) findServer(addr Address) (int, bool) {
	for i, s := range f.Servers {
		if s.Addr == addr {
			return i, true
		}
	}
	return 0, false
}

// apply updates the topology; a primary's host list defines the members.
func (f *fsm) apply(s ServerDesc) (TopologyDesc, ServerDesc) {
	if s.Kind == "RSPrimary" {
		var servers []ServerDesc
		for _, h := range s.Hosts {
			servers = append(servers, ServerDesc{Addr: h, Kind: "Unknown"})
		}
		f.Servers = servers
	}
	if i, ok := f.findServer(s.Addr); ok {
		f.Servers[i] = s
	}
	return TopologyDesc{Servers: append([]ServerDesc(nil), f.Servers...)}, s
}

type updateTopologyCallback func(ServerDesc) ServerDesc

type Server struct {
	address                Address
	state                  int64
	updateTopologyCallback atomic.Value
	done                   chan struct{}
	closewg                sync.WaitGroup
	hello                  func() ServerDesc // the heartbeat "hello" round trip
}

const disconnected, connected int64 = 0, 1

func (s *Server) Connect(cb updateTopologyCallback) {
	atomic.StoreInt64(&s.state, connected)
	s.updateTopologyCallback.Store(cb)
	s.closewg.Add(1)
	go s.update()
}

func (s *Server) Disconnect() {
	if !atomic.CompareAndSwapInt64(&s.state, connected, disconnected) {
		return
	}
	close(s.done)
	s.closewg.Wait()
}

// update handles performing heartbeats and reporting each new description.
func (s *Server) update() {
	defer s.closewg.Done()
	for {
		select {
		case <-s.done:
			return
		default:
		}
		s.updateDescription(s.hello())
		select {
		case <-s.done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *Server) updateDescription(desc ServerDesc) {
	if cb, ok := s.updateTopologyCallback.Load().(updateTopologyCallback); ok && cb != nil {
		_ = cb(desc)
	}
}

type Topology struct {
	state         int64
	desc          atomic.Value
	fsm           *fsm
	serversLock   sync.Mutex
	serversClosed bool
	servers       map[Address]*Server
	dialer        func(Address) func() ServerDesc
}

func (t *Topology) Connect(seeds []Address) {
	t.serversLock.Lock()
	for _, a := range seeds {
		t.fsm.Servers = append(t.fsm.Servers, ServerDesc{Addr: a, Kind: "Unknown"})
		_ = t.addServer(a)
	}
	t.serversLock.Unlock()
	atomic.StoreInt64(&t.state, connected)
}

// addServer must be called with t.serversLock held.
func (t *Topology) addServer(addr Address) error {
	if _, ok := t.servers[addr]; ok {
		return nil
	}
	svr := &Server{address: addr, done: make(chan struct{}), hello: t.dialer(addr)}
	svr.Connect(t.apply)
	t.servers[addr] = svr
	return nil
}

// apply updates the Topology and its underlying FSM based on the provided
// server description and returns the updated server description.
func (t *Topology) apply(desc ServerDesc) ServerDesc {
	t.serversLock.Lock()
	defer t.serversLock.Unlock()
	if _, ok := t.fsm.findServer(desc.Addr); t.serversClosed || !ok {
		return desc
	}
	prev := t.fsm.TopologyDesc
	current, desc := t.fsm.apply(desc)
	diff := DiffTopology(prev, current)
	for _, removed := range diff.Removed {
		if s, ok := t.servers[removed.Addr]; ok {
			go func() {
				s.Disconnect()
			}()
			delete(t.servers, removed.Addr)
		}
	}
	t.desc.Store(current)
	return desc
}

func (t *Topology) Disconnect() {
	if !atomic.CompareAndSwapInt64(&t.state, connected, disconnected) {
		return
	}
	servers := make(map[Address]*Server)
	t.serversLock.Lock()
	t.serversClosed = true
	for addr, server := range t.servers {
		servers[addr] = server
	}
	t.serversLock.Unlock()
	for _, server := range servers {
		server.Disconnect()
	}
}

func main() {
	t := &Topology{fsm: &fsm{}, servers: map[Address]*Server{}}
	t.dialer = func(a Address) func() ServerDesc {
		return func() ServerDesc {
			if a == "a:27017" { // the primary answers fast; b is no longer a member
				time.Sleep(5 * time.Millisecond)
				return ServerDesc{Addr: a, Kind: "RSPrimary", Hosts: []Address{"a:27017"}}
			}
			time.Sleep(40 * time.Millisecond)
			return ServerDesc{Addr: a, Kind: "RSSecondary", Hosts: []Address{"a:27017", "b:27017"}}
		}
	}
	t.Connect([]Address{"a:27017", "b:27017"})
	time.Sleep(100 * time.Millisecond)
	t.Disconnect()
	fmt.Println("client disconnected; final topology:", t.desc.Load())
}
