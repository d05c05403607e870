// Fixed version (PR #2051 applied).
// Project: kubernetes/ingress-gce (GKE ingress / NEG controller), early 2023
// (degraded-mode "error state" work, release-1.20/1.21 branches).
// Files: pkg/neg/syncers/transaction.go (transactionSyncer.syncNetworkEndpoints,
// attachNetworkEndpoints, operationInternal, setErrorState, commitTransaction,
// syncInternal).
// Fix: kubernetes/ingress-gce PR #2051 "Fix syncLock deadlock" (cherry-pick
// #2053): "Deferring lock create deadlock with commitTransaction."
//
// syncNetworkEndpoints starts one goroutine per zone batch; each runs
// attachNetworkEndpoints -> operationInternal, which calls the GCE NEG API
// and must call commitTransaction last ("WARNING: commitTransaction must be
// called at last"). The degraded-mode change made operationInternal, when
// the API rejects the batch as invalid, take s.syncLock with
// `defer s.syncLock.Unlock()` to flip the syncer into error state. The
// deferred unlock only runs when operationInternal returns, but before
// returning it calls commitTransaction, which locks s.syncLock again: the
// operation goroutine blocks on the lock it holds, its transaction entries
// are never cleared, and every later sync of that NEG blocks in syncInternal
// on the same syncLock. The fix releases syncLock right after setting the
// error state instead of deferring the unlock.
package main

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

type transactionOp int

const (
	attachOp transactionOp = iota
	detachOp
)

func (op transactionOp) String() string {
	if op == attachOp {
		return "Attach"
	}
	return "Detach"
}

type NetworkEndpoint struct{ IP, Port, Node string }

type transactionEntry struct {
	Operation transactionOp
	Zone      string
}

type networkEndpointTransactionTable map[NetworkEndpoint]transactionEntry

// googleapi.Error
type apiError struct{ Code int }

func (e *apiError) Error() string { return fmt.Sprintf("googleapi: Error %d", e.Code) }

type NetworkEndpointGroupCloud interface {
	AttachNetworkEndpoints(name, zone string, endpoints []NetworkEndpoint) error
}

type fakeNEGCloud struct{}

func (fakeNEGCloud) AttachNetworkEndpoints(name, zone string, endpoints []NetworkEndpoint) error {
	return &apiError{Code: http.StatusBadRequest} // endpoint batch references a stale pod IP
}

var errInvalidEPAttach = errors.New("invalid endpoint info in attach response")

type transactionSyncer struct {
	negName string

	// syncLock ensures state transitions are thread safe
	syncLock     sync.Mutex
	needInit     bool
	transactions networkEndpointTransactionTable
	errorState   string

	cloud              NetworkEndpointGroupCloud
	enableDegradedMode bool
	retries            int
}

func (s *transactionSyncer) sync() error {
	return s.syncInternal()
}

func (s *transactionSyncer) syncInternal() error {
	s.syncLock.Lock()
	defer s.syncLock.Unlock()
	if len(s.transactions) > 0 {
		return nil // wait for in-flight transactions
	}
	add := map[string][]NetworkEndpoint{"us-central1-a": {{IP: "10.8.0.12", Port: "8080", Node: "node-a"}}}
	return s.syncNetworkEndpoints(add)
}

// syncNetworkEndpoints spins off go routines to execute NEG operations
func (s *transactionSyncer) syncNetworkEndpoints(addEndpoints map[string][]NetworkEndpoint) error {
	for zone, endpoints := range addEndpoints {
		batch := map[NetworkEndpoint]struct{}{}
		for _, ep := range endpoints {
			s.transactions[ep] = transactionEntry{Operation: attachOp, Zone: zone}
			batch[ep] = struct{}{}
		}
		go s.attachNetworkEndpoints(zone, batch)
	}
	return nil
}

func (s *transactionSyncer) attachNetworkEndpoints(zone string, networkEndpointMap map[NetworkEndpoint]struct{}) {
	s.operationInternal(attachOp, zone, networkEndpointMap)
}

func (s *transactionSyncer) operationInternal(operation transactionOp, zone string, networkEndpointMap map[NetworkEndpoint]struct{}) {
	var networkEndpoints []NetworkEndpoint
	for ne := range networkEndpointMap {
		networkEndpoints = append(networkEndpoints, ne)
	}
	err := s.cloud.AttachNetworkEndpoints(s.negName, zone, networkEndpoints)
	if err != nil {
		fmt.Printf("Failed to %s %d network endpoint(s) (NEG %q in zone %q): %v\n",
			operation, len(networkEndpointMap), s.negName, zone, err)
		if s.enableDegradedMode {
			if batchErr := s.ValidateEndpointBatch(err, operation); batchErr != nil {
				s.syncLock.Lock()
				s.setErrorState(batchErr.Error())
				s.syncLock.Unlock()
			}
		}
	}

	// WARNING: commitTransaction must be called at last for analyzing the operation result
	s.commitTransaction(err, networkEndpointMap)
}

func (s *transactionSyncer) ValidateEndpointBatch(err error, operation transactionOp) error {
	var gerr *apiError
	if errors.As(err, &gerr) && gerr.Code == http.StatusBadRequest && operation == attachOp {
		return fmt.Errorf("%w: %v", errInvalidEPAttach, err)
	}
	return nil
}

// syncLock must already be acquired before execution
func (s *transactionSyncer) setErrorState(reason string) {
	s.errorState = reason
}

func (s *transactionSyncer) commitTransaction(err error, networkEndpointMap map[NetworkEndpoint]struct{}) {
	s.syncLock.Lock()
	defer s.syncLock.Unlock()
	if err != nil {
		s.needInit = true
		s.retries++
	}
	for ne := range networkEndpointMap {
		delete(s.transactions, ne)
	}
}

func main() {
	s := &transactionSyncer{
		negName:            "k8s1-89f6839e-default-neg-demo-svc-80-b0c7e439",
		transactions:       networkEndpointTransactionTable{},
		cloud:              fakeNEGCloud{},
		enableDegradedMode: true,
	}
	if err := s.sync(); err != nil {
		fmt.Println("sync:", err)
	}
	// The retry handler / next endpoint-slice event syncs the NEG again.
	for i := 0; i < 3; i++ {
		time.Sleep(50 * time.Millisecond) // retry backoff
		s.syncLock.Lock()
		pending, state := len(s.transactions), s.errorState
		s.syncLock.Unlock()
		if pending == 0 {
			fmt.Println("transactions committed; error state:", state)
			return
		}
		if err := s.sync(); err != nil {
			fmt.Println("sync:", err)
		}
	}
}
