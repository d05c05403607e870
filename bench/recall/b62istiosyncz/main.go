// istio/istio #10177 ("Fix deadlock in Syncz"): the /debug/syncz handler
// (behind `istioctl proxy-status`) took adsClientsMutex for reading twice
// ("the lock is acquired 2 times (and it's not re-entrant)"). Between the two
// read locks a sidecar connecting over ADS asks for the write lock in addCon;
// Go's RWMutex then refuses the handler's second RLock, and the writer waits
// for the handler's first one.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

type Proxy struct {
	ID           string
	IstioVersion string
}

type XdsConnection struct {
	mu                 sync.RWMutex
	ConID              string
	modelNode          *Proxy
	ClusterNonceSent   string
	ClusterNonceAcked  string
	ListenerNonceSent  string
	ListenerNonceAcked string
}

type SyncStatus struct {
	ProxyID       string `json:"proxy,omitempty"`
	IstioVersion  string `json:"istio_version,omitempty"`
	ClusterSent   string `json:"cluster_sent,omitempty"`
	ClusterAcked  string `json:"cluster_acked,omitempty"`
	ListenerSent  string `json:"listener_sent,omitempty"`
	ListenerAcked string `json:"listener_acked,omitempty"`
}

type DiscoveryServer struct {
	adsClientsMutex sync.RWMutex
	adsClients      map[string]*XdsConnection
}

func (s *DiscoveryServer) addCon(conID string, con *XdsConnection) {
	s.adsClientsMutex.Lock()
	defer s.adsClientsMutex.Unlock()
	s.adsClients[conID] = con
}

func (s *DiscoveryServer) adsClientCount() int {
	s.adsClientsMutex.RLock()
	defer s.adsClientsMutex.RUnlock()
	return len(s.adsClients)
}

// StreamAggregatedResources: the first DiscoveryRequest of a new sidecar.
func (s *DiscoveryServer) StreamAggregatedResources(node *Proxy) *XdsConnection {
	con := &XdsConnection{ConID: node.ID + "-1"}
	con.mu.Lock()
	con.modelNode = node
	con.mu.Unlock()
	s.addCon(con.ConID, con)
	return con
}

// Syncz dumps the synchronization status of all Envoys connected to this Pilot.
func (s *DiscoveryServer) Syncz(w io.Writer) {
	s.adsClientsMutex.RLock()
	defer s.adsClientsMutex.RUnlock()
	syncz := make([]SyncStatus, 0, len(s.adsClients))
	for _, con := range s.adsClients {
		con.mu.RLock()
		if con.modelNode != nil {
			st := SyncStatus{
				ProxyID:       con.modelNode.ID,
				IstioVersion:  con.modelNode.IstioVersion,
				ClusterSent:   con.ClusterNonceSent,
				ClusterAcked:  con.ClusterNonceAcked,
				ListenerSent:  con.ListenerNonceSent,
				ListenerAcked: con.ListenerNonceAcked,
			}
			syncz = append(syncz, st)
			out, _ := json.Marshal(st)
			w.Write(out) // streamed to the (slow) debug client
		}
		con.mu.RUnlock()
	}
	fmt.Fprintf(w, "\n# %d of %d connected proxies\n", len(syncz), s.adsClientCount())
}

// slowClient is the istioctl side of the debug HTTP connection.
type slowClient struct{ n int }

func (c *slowClient) Write(p []byte) (int, error) {
	time.Sleep(40 * time.Millisecond)
	c.n += len(p)
	return len(p), nil
}

func main() {
	s := &DiscoveryServer{adsClients: map[string]*XdsConnection{}}
	for i := 0; i < 3; i++ {
		s.StreamAggregatedResources(&Proxy{ID: fmt.Sprintf("productpage-v1-%d.default", i), IstioVersion: "1.1.0"})
	}

	go func() {
		time.Sleep(50 * time.Millisecond) // a new sidecar connects mid-dump
		s.StreamAggregatedResources(&Proxy{ID: "reviews-v2-0.default", IstioVersion: "1.1.0"})
	}()

	w := &slowClient{}
	s.Syncz(w)
	fmt.Printf("syncz: wrote %d bytes, %d clients\n", w.n, s.adsClientCount())
}
