// Project: nats-io/nats-server v2.4.0 / v2.5.0 development (JetStream clustering), Aug 2021.
// Files/functions: server/monitor.go: Server.HandleVarz, Server.updateVarzRuntimeFields
// (JetStream part, later moved into Server.updateJszVarz); server/jetstream.go:
// jetStream.usageStats; server/jetstream_cluster.go: jetStream.clusterInfo,
// jetStream.processStreamAssignment, Server.jsClusteredStreamInfo; server/server.go:
// Server.ClusterName.
// Issue/PR: nats-io/nats-server#2479 "[FIXED] JetStream: possible deadlock due to
// lock inversion" (the established order is jetStream -> Server).
//
// The /varz handler holds the Server write lock while it refreshes the
// runtime fields of the cached Varz, and the JetStream part of that refresh
// called jetStream.usageStats, which read-locks js.mu: Server -> jetStream.
// JetStream code takes the locks the other way: a clustered stream-info
// request read-locks js.mu and builds the ClusterInfo through
// jetStream.clusterInfo, which asks Server.ClusterName for the cluster name
// (s.mu read lock). With a meta-layer update queued for the js write lock in
// between, the three block in a cycle: /varz holds s.mu and waits for js.mu
// behind the queued writer, the writer waits for the stream-info reader to
// leave, and the stream-info reader waits for s.mu. The fix updates the
// JetStream varz outside of the server lock (Server.updateJszVarz), copying
// the result back under s.mu afterwards.
package main

import (
	"fmt"
	"sync"
	"time"
)

type (
	JetStreamConfig struct {
		MaxMemory, MaxStore int64
		StoreDir            string
	}
	JetStreamStats struct {
		Memory, Store uint64
		Accounts      int
	}
	JetStreamVarz struct {
		Config *JetStreamConfig
		Stats  *JetStreamStats
	}
	Varz struct {
		ID          string
		Now         time.Time
		Connections int
		JetStream   JetStreamVarz
	}
	Info        struct{ ID, Name, Cluster string }
	ClusterInfo struct{ Name, Leader string }
	raftGroup   struct {
		Name  string
		Peers []string
	}
	streamAssignment struct {
		Name  string
		Group *raftGroup
	}
	StreamInfo struct {
		Name    string
		Cluster *ClusterInfo
	}
)

type jetStream struct {
	mu            sync.RWMutex
	srv           *Server
	config        JetStreamConfig
	accounts      map[string]bool
	streams       map[string]*streamAssignment
	memReserved   int64
	storeReserved int64
}

type Server struct {
	mu           sync.RWMutex
	varzMu       sync.Mutex
	info         Info
	varz         *Varz
	clients      map[uint64]bool
	httpReqStats map[string]uint64
	js           *jetStream
}

func (s *Server) ClusterName() string {
	s.mu.RLock()
	cn := s.info.Cluster
	s.mu.RUnlock()
	return cn
}

func (js *jetStream) usageStats() *JetStreamStats {
	var stats JetStreamStats
	js.mu.RLock()
	stats.Accounts = len(js.accounts)
	stats.Memory = uint64(js.memReserved)
	stats.Store = uint64(js.storeReserved)
	js.mu.RUnlock()
	return &stats
}

// Read lock should be held.
func (js *jetStream) clusterInfo(rg *raftGroup) *ClusterInfo {
	s := js.srv
	if rg == nil {
		return &ClusterInfo{Name: s.ClusterName(), Leader: s.info.Name}
	}
	return &ClusterInfo{Name: s.ClusterName(), Leader: rg.Peers[0]}
}

func (js *jetStream) processStreamAssignment(sa *streamAssignment) {
	js.mu.Lock()
	js.streams[sa.Name] = sa
	js.mu.Unlock()
}

func (s *Server) jsClusteredStreamInfo(name string) *StreamInfo {
	js := s.js
	js.mu.RLock()
	defer js.mu.RUnlock()
	sa := js.streams[name]
	// collect the per-replica state of the stream
	time.Sleep(30 * time.Millisecond)
	return &StreamInfo{Name: name, Cluster: js.clusterInfo(sa.Group)}
}

// Server lock is held on entry.
func (s *Server) updateVarzRuntimeFields(v *Varz) {
	v.Now = time.Now()
	v.Connections = len(s.clients)
	// gather process and route statistics
	time.Sleep(20 * time.Millisecond)
	if js := s.js; js != nil {
		v.JetStream.Stats = js.usageStats()
	}
}

func (s *Server) HandleVarz() *Varz {
	s.varzMu.Lock()
	defer s.varzMu.Unlock()

	s.mu.Lock()
	s.httpReqStats["/varz"]++
	if s.varz == nil {
		s.varz = &Varz{ID: s.info.ID}
	}
	s.updateVarzRuntimeFields(s.varz)
	v := *s.varz
	s.mu.Unlock()
	return &v
}

func main() {
	s := &Server{
		info:         Info{ID: "NC2XQ", Name: "n1", Cluster: "east"},
		clients:      map[uint64]bool{1: true, 2: true},
		httpReqStats: map[string]uint64{},
	}
	s.js = &jetStream{
		srv:      s,
		config:   JetStreamConfig{MaxMemory: 1 << 30, StoreDir: "/data/jetstream"},
		accounts: map[string]bool{"$G": true},
		streams:  map[string]*streamAssignment{"ORDERS": {Name: "ORDERS", Group: &raftGroup{Name: "S-R3F-x1", Peers: []string{"n1", "n2", "n3"}}}},
	}

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // $JS.API.STREAM.INFO.ORDERS
		defer wg.Done()
		si := s.jsClusteredStreamInfo("ORDERS")
		fmt.Println("stream info:", si.Name, si.Cluster.Name)
	}()
	go func() { // GET /varz
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		v := s.HandleVarz()
		fmt.Println("varz connections:", v.Connections)
	}()
	go func() { // meta leader applies a new stream assignment
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		s.js.processStreamAssignment(&streamAssignment{Name: "EVENTS", Group: &raftGroup{Name: "S-R1F-y2", Peers: []string{"n2"}}})
		fmt.Println("stream assignment applied")
	}()
	wg.Wait()
}
