// Reconstruction of an Istio pilot (an Envoy xDS control plane) deadlock fixed
// by istio/istio#16879, "Fix a bug in eds debug interface where the eds lock is
// not released under abnormal conditions".
//
// Pilot keeps the EDS clusters its sidecars subscribed to in the package-level
// edsClusters map, guarded by edsClusterMutex. The /debug/edsz handler
// (DiscoveryServer.edsz) locked edsClusterMutex, streamed the load assignment
// of every cluster to the HTTP response, and unlocked at the end. When a write
// failed, typically because the caller (istioctl or a curl with a timeout)
// went away, the handler returned from the middle of the loop with the lock
// still held. The next sidecar that subscribes to a cluster, through
// StreamAggregatedResources and getOrAddEdsCluster, and the next edsz request
// block on edsClusterMutex forever, so pilot stops serving endpoints.
//
// The fixed twin releases the lock with a defer, so the early return on a
// write error unlocks it.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ResponseWriter and Request stand in for the net/http types the monitor
// port's mux hands to the debug handlers.
type ResponseWriter interface {
	Write([]byte) (int, error)
	WriteHeader(statusCode int)
}

type Request struct {
	Method, URL string
	Form        map[string]string
}

func (r *Request) ParseForm() error { r.Form = map[string]string{}; return nil }

type responseRecorder struct {
	Code int
	Body bytes.Buffer
}

func (r *responseRecorder) Write(p []byte) (int, error) {
	if r.Code == 0 {
		r.Code = 200
	}
	return r.Body.Write(p)
}

func (r *responseRecorder) WriteHeader(code int) { r.Code = code }

type ClusterLoadAssignment struct {
	ClusterName string
	Endpoints   []string
}

type XdsConnection struct {
	ConID  string
	Node   string
	Routes []string
}

type EdsCluster struct {
	mutex          sync.Mutex
	LoadAssignment *ClusterLoadAssignment
	EdsClients     map[string]*XdsConnection
}

var (
	edsClusterMutex sync.Mutex
	edsClusters     = map[string]*EdsCluster{}
)

type DiscoveryServer struct{}

// getOrAddEdsCluster tracks the eds connection with clusters, for optimized
// event-based push and debug.
func (s *DiscoveryServer) getOrAddEdsCluster(clusterName string, connection *XdsConnection) *EdsCluster {
	edsClusterMutex.Lock()
	defer edsClusterMutex.Unlock()
	c := edsClusters[clusterName]
	if c == nil {
		c = &EdsCluster{
			EdsClients:     map[string]*XdsConnection{},
			LoadAssignment: &ClusterLoadAssignment{ClusterName: clusterName, Endpoints: []string{"10.1.0.4:8080"}},
		}
		edsClusters[clusterName] = c
	}
	c.mutex.Lock()
	c.EdsClients[connection.ConID] = connection
	c.mutex.Unlock()
	return c
}

// StreamAggregatedResources handles the EDS requests of one sidecar stream.
func (s *DiscoveryServer) StreamAggregatedResources(con *XdsConnection, clusters []string) {
	for _, clusterName := range clusters {
		c := s.getOrAddEdsCluster(clusterName, con)
		c.mutex.Lock()
		fmt.Printf("EDS: %s subscribed to %s (%d endpoints)\n", con.ConID, clusterName, len(c.LoadAssignment.Endpoints))
		c.mutex.Unlock()
	}
}

// edsz implements a status and debug interface for EDS.
// It is mapped to /debug/edsz on the monitor port.
func (s *DiscoveryServer) edsz(w ResponseWriter, req *Request) {
	_ = req.ParseForm()

	edsClusterMutex.Lock()
	comma := false
	if len(edsClusters) > 0 {
		fmt.Fprintln(w, "[")
		for _, eds := range edsClusters {
			if comma {
				fmt.Fprint(w, ",\n")
			} else {
				comma = true
			}
			dbgString := fmt.Sprintf("{%q: %q, %q: %q}", "clusterName", eds.LoadAssignment.ClusterName,
				"endpoints", strings.Join(eds.LoadAssignment.Endpoints, ","))
			if _, err := w.Write([]byte(dbgString)); err != nil {
				return
			}
		}
		fmt.Fprintln(w, "]")
	} else {
		w.WriteHeader(404)
	}
	edsClusterMutex.Unlock()
}

// brokenPipeWriter is the response of a client that hung up mid-response.
type brokenPipeWriter struct {
	ResponseWriter
	budget int
}

func (w *brokenPipeWriter) Write(p []byte) (int, error) {
	if w.budget -= len(p); w.budget < 0 {
		return 0, errors.New("write tcp 10.1.0.2:15014->10.1.0.9:51522: write: broken pipe")
	}
	return w.ResponseWriter.Write(p)
}

func main() {
	s := &DiscoveryServer{}
	s.StreamAggregatedResources(&XdsConnection{ConID: "sidecar~10.1.0.4~productpage-v1-1"},
		[]string{"outbound|9080||reviews.default.svc.cluster.local"})

	// istioctl asks for /debug/edsz and gives up before the body is written.
	served := make(chan struct{})
	go func() {
		defer close(served)
		req := &Request{Method: "GET", URL: "/debug/edsz"}
		s.edsz(&brokenPipeWriter{ResponseWriter: &responseRecorder{}, budget: 2}, req)
	}()
	<-served

	// A new sidecar connects and subscribes to its clusters.
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		s.StreamAggregatedResources(&XdsConnection{ConID: "sidecar~10.1.0.7~reviews-v2-1"},
			[]string{"outbound|9080||ratings.default.svc.cluster.local"})
	}()

	time.Sleep(10 * time.Millisecond)
	rec := &responseRecorder{}
	s.edsz(rec, &Request{Method: "GET", URL: "/debug/edsz"})
	fmt.Println("edsz:", rec.Code, rec.Body.Len(), "bytes")
	<-streamDone
}
