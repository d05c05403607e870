// Project: istio/istio, Pilot 1.1 (pilot/pkg/proxy/envoy/v2/discovery.go: DiscoveryServer.handleUpdates, doPush, ConfigUpdate; eds.go: WorkloadUpdate)
// Issue: istio/istio#9882 "Pilot 1.1 deadlock - release-1.1-20181109-09-15" (fixed by #9883 "Fix deadlock: Simplify debounce, remove locking")
// A 3-way deadlock between the update channel and two mutexes of DiscoveryServer. The
// debounce timer's doPush takes updateMutex (line 73) and then wants s.mutex (line 79) to swap out
// the pending EDS updates. WorkloadUpdate holds s.mutex (line 90) while it records a pod's new
// labels and then asks for a full push through ConfigUpdate, which sends on the bounded
// updateChannel (line 55). The only receiver, handleUpdates, has taken a request off the channel
// and blocks on updateMutex (line 60) to update the debounce counters, so the channel stays full:
// handleUpdates waits for doPush, doPush for WorkloadUpdate, WorkloadUpdate for handleUpdates.
// Pilot keeps its sidecar connections open but never pushes again.
// main() lets a slow WorkloadUpdate hold s.mutex while the debounce timer fires and a burst
// of config events fills the channel.
package main

import (
	"fmt"
	"sync"
	"time"
)

type updateReq struct{ full bool }

// Workload has the pod labels Pilot pushes to sidecars.
type Workload struct{ Labels map[string]string }

// DiscoveryServer is Pilot's ADS/EDS server.
type DiscoveryServer struct {
	// mutex protecting global structs updated or read by ADS service.
	mutex         sync.RWMutex
	WorkloadsByID map[string]*Workload
	edsUpdates    map[string]struct{}

	updateChannel chan *updateReq

	// mutex used for config update scheduling (former cache update mutex)
	updateMutex      sync.RWMutex
	fullPush         bool
	clearCacheEvents int
	lastClearCache   time.Time
}

// NewDiscoveryServer creates the server and starts the debounce loop.
func NewDiscoveryServer() *DiscoveryServer {
	s := &DiscoveryServer{
		WorkloadsByID: map[string]*Workload{},
		edsUpdates:    map[string]struct{}{},
		updateChannel: make(chan *updateReq, 10),
	}
	go s.handleUpdates()
	return s
}

// ConfigUpdate implements the config handlers: it queues a push request.
func (s *DiscoveryServer) ConfigUpdate(full bool) {
	s.updateChannel <- &updateReq{full: full}
}

func (s *DiscoveryServer) handleUpdates() {
	for r := range s.updateChannel {
		s.updateMutex.Lock()
		if r.full {
			s.fullPush = true
		}
		s.clearCacheEvents++
		s.updateMutex.Unlock()
	}
}

// doPush starts the actual push. Called from the debounce timer.
func (s *DiscoveryServer) doPush() {
	// more config update events may happen while doPush is processing.
	// we don't want to lose updates.
	s.updateMutex.Lock()
	full := s.fullPush
	s.fullPush = false
	s.clearCacheEvents = 0
	s.lastClearCache = time.Now()

	s.mutex.Lock()
	edsUpdates := s.edsUpdates
	s.edsUpdates = map[string]struct{}{}
	s.mutex.Unlock()
	s.updateMutex.Unlock()

	fmt.Printf("push: full=%v eds=%d\n", full, len(edsUpdates))
}

// WorkloadUpdate is called by the registry when a pod's labels change.
func (s *DiscoveryServer) WorkloadUpdate(id string, labels map[string]string) {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	w, found := s.WorkloadsByID[id]
	if found && fmt.Sprint(w.Labels) == fmt.Sprint(labels) {
		return
	}
	s.WorkloadsByID[id] = &Workload{Labels: labels}
	s.edsUpdates[id] = struct{}{}
	time.Sleep(150 * time.Millisecond) // refresh every connected proxy's labels
	// Label changes can change which rules apply: trigger a full push.
	s.ConfigUpdate(true)
}

func main() {
	s := NewDiscoveryServer()
	var wg sync.WaitGroup

	wg.Add(1)
	go func() { // pod cache event
		defer wg.Done()
		s.WorkloadUpdate("reviews-v2-abc.default", map[string]string{"app": "reviews", "version": "v2"})
	}()

	time.Sleep(30 * time.Millisecond)
	wg.Add(1)
	time.AfterFunc(0, func() { // debounce timer
		defer wg.Done()
		s.doPush()
	})

	time.Sleep(30 * time.Millisecond)
	for i := 0; i < 11; i++ { // a burst of config store events
		s.ConfigUpdate(false)
	}

	wg.Wait()
	fmt.Println("all pushes done")
}
