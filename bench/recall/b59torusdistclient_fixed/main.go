// Project: coreos/torus (distributed block storage)
// Version: mid 2016, with PR #257 applied
// Files/functions: distributor/client.go: newDistClient, distClient.getConn,
// onPeerTimeout, Check; distributor/rebalance.go: rebalancer.Tick; server.go:
// Server.AddTimeoutCallback, GetPeerMap, UpdatePeerMap, updatePeerMap;
// heartbeat.go: Server.oneHeartbeat.
// Issue: coreos/torus #238 "Deadlock between server and distclient", fixed by
// PR #257.
//
// newDistClient registers distClient.onPeerTimeout via AddTimeoutCallback;
// the callback takes distClient.mut to close the connection to a peer that
// disappeared. The heartbeat calls oneHeartbeat, which locks Server.mut and
// runs updatePeerMap, invoking the timeout callbacks for peers missing from
// the metadata service: Server.mut is held while waiting for distClient.mut.
// The rebalancer checks blocks on a peer with distClient.Check -> getConn,
// which holds distClient.mut (deferred unlock) while asking the server for
// the peer's address with GetPeerMap (or UpdatePeerMap on a miss), which lock
// Server.mut. The two goroutines take the mutexes in opposite orders.
// This fixed version makes getConn drop distClient.mut before consulting the peer map
// and dialing, and re-take it only to insert the new connection.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type PeerInfo struct{ UUID, Address string }

type MetadataService interface {
	GetPeers() ([]*PeerInfo, error)
	RegisterPeer(p *PeerInfo) error
}

type memMDS struct{ peers []*PeerInfo }

func (m *memMDS) GetPeers() ([]*PeerInfo, error) { return m.peers, nil }
func (m *memMDS) RegisterPeer(p *PeerInfo) error { return nil }

type Server struct {
	mut              sync.RWMutex
	infoMut          sync.Mutex
	mds              MetadataService
	peersMap         map[string]*PeerInfo
	timeoutCallbacks []func(string)
	peerInfo         *PeerInfo
}

func (s *Server) AddTimeoutCallback(f func(uuid string)) {
	s.mut.Lock()
	defer s.mut.Unlock()
	s.timeoutCallbacks = append(s.timeoutCallbacks, f)
}

func (s *Server) GetPeerMap() map[string]*PeerInfo {
	s.mut.RLock()
	defer s.mut.RUnlock()
	return s.peersMap
}

func (s *Server) UpdatePeerMap() map[string]*PeerInfo {
	s.mut.Lock()
	defer s.mut.Unlock()
	s.updatePeerMap()
	return s.peersMap
}

func (s *Server) updatePeerMap() {
	peers, err := s.mds.GetPeers()
	if err != nil {
		return
	}
	newMap := make(map[string]*PeerInfo)
	for _, p := range peers {
		newMap[p.UUID] = p
	}
	for k := range s.peersMap {
		if _, ok := newMap[k]; !ok {
			for _, f := range s.timeoutCallbacks {
				f(k)
			}
		}
	}
	s.peersMap = newMap
}

func (s *Server) oneHeartbeat() {
	s.infoMut.Lock()
	defer s.infoMut.Unlock()
	if err := s.mds.RegisterPeer(s.peerInfo); err == nil {
		s.mut.Lock()
		s.updatePeerMap()
		s.mut.Unlock()
	}
}

type RPC interface{ Close() error }
type grpcConn struct{ addr string }

func (c *grpcConn) Close() error       { return nil }
func DialRPC(addr string) (RPC, error) { return &grpcConn{addr: addr}, nil }

type Distributor struct {
	srv    *Server
	client *distClient
}

type distClient struct {
	dist      *Distributor
	mut       sync.Mutex
	openConns map[string]RPC
}

func newDistClient(d *Distributor) *distClient {
	client := &distClient{dist: d, openConns: make(map[string]RPC)}
	d.srv.AddTimeoutCallback(client.onPeerTimeout)
	return client
}

func (d *distClient) onPeerTimeout(uuid string) {
	d.mut.Lock()
	defer d.mut.Unlock()
	if conn, ok := d.openConns[uuid]; ok {
		conn.Close()
		delete(d.openConns, uuid)
	}
}

func (d *distClient) getConn(uuid string) RPC {
	d.mut.Lock()
	if conn, ok := d.openConns[uuid]; ok {
		d.mut.Unlock()
		return conn
	}
	d.mut.Unlock()
	time.Sleep(50 * time.Millisecond) // the heartbeat refreshes the peer map now
	pi := d.dist.srv.GetPeerMap()[uuid]
	if pi == nil {
		pi = d.dist.srv.UpdatePeerMap()[uuid]
		if pi == nil {
			return nil
		}
	}
	conn, err := DialRPC(pi.Address)
	if err != nil {
		return nil
	}
	d.mut.Lock()
	defer d.mut.Unlock()
	if c, ok := d.openConns[uuid]; ok {
		conn.Close()
		return c
	}
	d.openConns[uuid] = conn
	return conn
}

func (d *distClient) Check(ctx context.Context, peer string, blks []uint64) ([]bool, error) {
	conn := d.getConn(peer)
	if conn == nil {
		return nil, errors.New("torus: no such peer") // torus.ErrNoPeer
	}
	return make([]bool, len(blks)), nil
}

type rebalancer struct{ client *distClient }

func (r *rebalancer) Tick() (int, error) {
	ok, err := r.client.Check(context.Background(), "p2", []uint64{1, 2, 3})
	return len(ok), err
}

func main() {
	srv := &Server{
		mds:      &memMDS{peers: []*PeerInfo{{"p1", "10.0.0.1:40000"}, {"p2", "10.0.0.2:40000"}}},
		peersMap: map[string]*PeerInfo{"p1": {"p1", "10.0.0.1:40000"}, "p3": {"p3", "10.0.0.3:40000"}},
		peerInfo: &PeerInfo{"p1", "10.0.0.1:40000"},
	}
	dist := &Distributor{srv: srv}
	dist.client = newDistClient(dist)
	dist.client.openConns["p3"] = &grpcConn{addr: "10.0.0.3:40000"}
	rb := &rebalancer{client: dist.client}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		fmt.Println(rb.Tick())
	}()
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		srv.oneHeartbeat()
	}()
	wg.Wait()
}
