// Project: istio/istio, Pilot 1.1 (pilot/pkg/proxy/envoy/v2/discovery.go: DiscoveryServer.handleUpdates, doPush, ConfigUpdate; eds.go: WorkloadUpdate)
// Issue: istio/istio#9882 "Pilot 1.1 deadlock - release-1.1-20181109-09-15" (fixed by #9883 "Fix deadlock: Simplify debounce, remove locking")
// Fixed twin: as in #9883, handleUpdates keeps the debounce state in local variables and
// takes no lock (line 64), so it keeps draining updateChannel; WorkloadUpdate's send (line 50) under
// s.mutex (line 98) completes, and the debounced doPush (updateMutex line 84, then s.mutex line 87) only
// waits for WorkloadUpdate to return.
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
	updateMutex    sync.RWMutex
	lastClearCache time.Time
}

// DebounceAfter is the quiet period before a push.
const DebounceAfter = 100 * time.Millisecond

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
	handleUpdates(s.updateChannel, DebounceAfter, s.doPush)
}

// handleUpdates processes events from updateChannel without taking any lock.
func handleUpdates(updateChannel <-chan *updateReq, debounceAfter time.Duration, pushFn func(full bool)) {
	var timeChan <-chan time.Time
	fullPush := false
	events := 0
	for {
		select {
		case r := <-updateChannel:
			if r.full {
				fullPush = true
			}
			events++
			if timeChan == nil {
				timeChan = time.After(debounceAfter)
			}
		case <-timeChan:
			fmt.Printf("debounced %d config events\n", events)
			go pushFn(fullPush)
			fullPush = false
			events = 0
			timeChan = nil
		}
	}
}

// doPush starts the actual push. Called from the debounce timer.
func (s *DiscoveryServer) doPush(full bool) {
	s.updateMutex.Lock()
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
		s.doPush(true)
	})

	time.Sleep(30 * time.Millisecond)
	for i := 0; i < 11; i++ { // a burst of config store events
		s.ConfigUpdate(false)
	}

	wg.Wait()
	fmt.Println("all pushes done")
}
