// thanos-io/thanos, pkg/receive/handler.go (Handler.forward, fanoutForward,
// distributeTimeseriesToReplicas, Handler.Hashring). Introduced by PR #6898
// (receive write path refactor), fixed by PR #7112 "receive/handler: fix
// locking twice": "we were RLock()ing twice. This leads to a deadlock in some
// situations. This check is weird so just delete it."
//
// forward read-locks h.mtx (line 132) to check that the hashring is set, but
// only the "hashring is not ready" branch releases it; the normal path goes on
// into fanoutForward -> distributeTimeseriesToReplicas, which read-locks h.mtx
// a second time (line 169, released by its defer) and returns with the first
// read lock still held. Every remote-write request therefore leaves one read
// lock behind. The next hashring change from the config watcher calls
// Hashring, whose h.mtx.Lock (line 103) now waits forever, and from then on
// every request's RLock in forward queues behind that writer: the receiver
// stops ingesting. The fix deletes the RLock/nil check from forward.
package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"
)

type Label struct{ Name, Value string }

type TimeSeries struct {
	Labels  []Label
	Samples []float64
}

type WriteRequest struct{ Timeseries []TimeSeries }

// Hashring finds the correct node to handle a given time series
// for a specified tenant.
type Hashring interface {
	GetN(tenant string, ts *TimeSeries, n uint64) (string, error)
	Nodes() []string
}

type simpleHashring []string

func (s simpleHashring) GetN(tenant string, ts *TimeSeries, n uint64) (string, error) {
	if n >= uint64(len(s)) {
		return "", errors.New("insufficient nodes")
	}
	h := fnv.New64a()
	h.Write([]byte(tenant))
	for _, l := range ts.Labels {
		h.Write([]byte(l.Name + l.Value))
	}
	return s[(h.Sum64()+n)%uint64(len(s))], nil
}

func (s simpleHashring) Nodes() []string { return s }

type Options struct {
	Endpoint          string
	ReplicationFactor uint64
}

type replica struct {
	n          uint64
	replicated bool
}

type endpointReplica struct {
	endpoint string
	replica  uint64
}

type trackedSeries struct {
	seriesIDs  []int
	timeSeries []TimeSeries
}

type remoteWriteParams struct {
	tenant            string
	writeRequest      *WriteRequest
	replicas          []uint64
	alreadyReplicated bool
}

type peerGroup struct {
	mu    sync.Mutex
	conns map[string]bool
}

func (p *peerGroup) close(addr string) { p.mu.Lock(); delete(p.conns, addr); p.mu.Unlock() }
func (p *peerGroup) reset()            { p.mu.Lock(); p.conns = map[string]bool{}; p.mu.Unlock() }

type Handler struct {
	options  *Options
	mtx      sync.RWMutex
	hashring Hashring
	peers    *peerGroup
	written  int
}

// Hashring sets the hashring for the handler and marks the hashring as ready.
func (h *Handler) Hashring(hashring Hashring) {
	h.mtx.Lock()
	defer h.mtx.Unlock()

	if h.hashring != nil {
		for _, node := range h.hashring.Nodes() {
			h.peers.close(node)
		}
	}
	h.hashring = hashring
	h.peers.reset()
}

func (h *Handler) handleRequest(rep uint64, tenant string, wreq *WriteRequest) error {
	if rep > h.options.ReplicationFactor {
		return errors.New("bad replica")
	}
	r := replica{n: rep, replicated: rep != 0}
	if r.replicated {
		r.n--
	}
	return h.forward(tenant, r, wreq)
}

// forward accepts a write request, batches its time series by
// corresponding endpoint, and forwards them in parallel to the
// correct endpoint.
func (h *Handler) forward(tenant string, r replica, wreq *WriteRequest) error {
	// It is possible that hashring is ready in testReady() but unready now,
	// so need to lock here.
	h.mtx.RLock()
	if h.hashring == nil {
		h.mtx.RUnlock()
		return errors.New("hashring is not ready")
	}

	var replicas []uint64
	if r.replicated {
		replicas = []uint64{r.n}
	} else {
		for rn := uint64(0); rn < h.options.ReplicationFactor; rn++ {
			replicas = append(replicas, rn)
		}
	}

	params := remoteWriteParams{
		tenant:            tenant,
		writeRequest:      wreq,
		replicas:          replicas,
		alreadyReplicated: r.replicated,
	}
	return h.fanoutForward(params)
}

func (h *Handler) fanoutForward(params remoteWriteParams) error {
	localWrites, remoteWrites, err := h.distributeTimeseriesToReplicas(params.tenant, params.replicas, params.writeRequest.Timeseries)
	if err != nil {
		return err
	}
	for _, ts := range localWrites {
		h.written += len(ts.timeSeries)
	}
	h.written += len(remoteWrites)
	return nil
}

func (h *Handler) distributeTimeseriesToReplicas(tenant string, replicas []uint64, timeseries []TimeSeries) (map[endpointReplica]trackedSeries, map[endpointReplica]trackedSeries, error) {
	h.mtx.RLock()
	defer h.mtx.RUnlock()
	remoteWrites := make(map[endpointReplica]trackedSeries)
	localWrites := make(map[endpointReplica]trackedSeries)
	for tsIndex, ts := range timeseries {
		for _, rn := range replicas {
			endpoint, err := h.hashring.GetN(tenant, &ts, rn)
			if err != nil {
				return nil, nil, err
			}
			er := endpointReplica{endpoint: endpoint, replica: rn}
			dest := remoteWrites
			if endpoint == h.options.Endpoint {
				dest = localWrites
			}
			ws := dest[er]
			ws.timeSeries = append(ws.timeSeries, ts)
			ws.seriesIDs = append(ws.seriesIDs, tsIndex)
			dest[er] = ws
		}
	}
	return localWrites, remoteWrites, nil
}

func main() {
	h := &Handler{options: &Options{Endpoint: "recv-0:10901", ReplicationFactor: 1}, peers: &peerGroup{conns: map[string]bool{}}}
	h.Hashring(simpleHashring{"recv-0:10901", "recv-1:10901"})

	req := &WriteRequest{Timeseries: []TimeSeries{{Labels: []Label{{"__name__", "up"}}, Samples: []float64{1}}}}
	fmt.Println("request 1:", h.handleRequest(0, "tenant-a", req))

	// The hashring watcher picks up a new hashrings.json.
	watcherDone := make(chan struct{})
	go func() {
		h.Hashring(simpleHashring{"recv-0:10901", "recv-1:10901", "recv-2:10901"})
		close(watcherDone)
	}()
	time.Sleep(50 * time.Millisecond)

	fmt.Println("request 2:", h.handleRequest(0, "tenant-a", req))
	<-watcherDone
	fmt.Println("hashring updated")
}
