// Shape of istio/istio #10177 ("Fix deadlock in Syncz"; Pilot 1.0.x could
// hang when `istioctl proxy-status` hit /debug/syncz).
//
// The Syncz debug handler acquired adsClientsMutex for reading twice ("the
// lock is acquired 2 times (and it's not re-entrant)"): once for the handler
// and again inside a helper that reads the connection map. A new Envoy ADS
// stream calling addCon (write lock) between the two acquisitions blocks the
// second RLock, and addCon waits for the first: Syncz and every later xDS
// connection hang. The fix removed the extra acquisition.
// (Which helper took the second read lock is reconstructed here.)
package main

import (
	"bytes"
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

var (
	adsClients      = map[string]*XdsConnection{}
	adsClientsMutex sync.RWMutex
)

// test hook to order the interleaving deterministically
var synczHook = func() {}

func addCon(conID string, con *XdsConnection) {
	adsClientsMutex.Lock()
	defer adsClientsMutex.Unlock()
	adsClients[conID] = con
}

func adsClientCount() int {
	adsClientsMutex.RLock()
	defer adsClientsMutex.RUnlock()
	return len(adsClients)
}

// StreamAggregatedResources: a new Envoy connects.
func StreamAggregatedResources(node *Proxy, n int) {
	con := &XdsConnection{ConID: fmt.Sprintf("%s-%d", node.ID, n), modelNode: node}
	addCon(con.ConID, con)
}

type SyncStatus struct {
	ProxyID       string `json:"proxy,omitempty"`
	IstioVersion  string `json:"istio_version,omitempty"`
	ClusterSent   string `json:"cluster_sent,omitempty"`
	ClusterAcked  string `json:"cluster_acked,omitempty"`
	ListenerSent  string `json:"listener_sent,omitempty"`
	ListenerAcked string `json:"listener_acked,omitempty"`
}

// Syncz dumps the synchronization status of all Envoys connected to Pilot.
func Syncz(w io.Writer) {
	adsClientsMutex.RLock()
	defer adsClientsMutex.RUnlock()
	synczHook()
	syncz := make([]SyncStatus, 0, adsClientCount()) // BUG: second RLock
	for _, con := range adsClients {
		con.mu.RLock()
		if con.modelNode != nil {
			syncz = append(syncz, SyncStatus{
				ProxyID:       con.modelNode.ID,
				IstioVersion:  con.modelNode.IstioVersion,
				ClusterSent:   con.ClusterNonceSent,
				ClusterAcked:  con.ClusterNonceAcked,
				ListenerSent:  con.ListenerNonceSent,
				ListenerAcked: con.ListenerNonceAcked,
			})
		}
		con.mu.RUnlock()
	}
	out, err := json.MarshalIndent(&syncz, "", "    ")
	if err != nil {
		fmt.Fprintf(w, "unable to marshal syncz information: %v", err)
		return
	}
	w.Write(out)
}

func main() {
	StreamAggregatedResources(&Proxy{ID: "productpage-v1.default", IstioVersion: "1.0.3"}, 1)

	handlerHolds := make(chan struct{})
	synczHook = func() {
		close(handlerHolds)
		time.Sleep(100 * time.Millisecond) // a new sidecar connects meanwhile
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // istioctl proxy-status -> GET /debug/syncz
		defer wg.Done()
		var buf bytes.Buffer
		Syncz(&buf)
		fmt.Printf("syncz: %d bytes\n", buf.Len())
	}()
	go func() { // reviews-v2 sidecar opens its ADS stream
		defer wg.Done()
		<-handlerHolds
		StreamAggregatedResources(&Proxy{ID: "reviews-v2.default", IstioVersion: "1.0.3"}, 2)
		fmt.Println("connected reviews-v2")
	}()
	wg.Wait()
	fmt.Println("clients:", adsClientCount())
}
