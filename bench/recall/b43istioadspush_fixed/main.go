// Fixed twin (PR #14635 applied).
// Project: istio/istio (Pilot), 1.2 development line, spring 2019.
// File: pilot/pkg/proxy/envoy/v2/ads.go
// Functions: DiscoveryServer.AdsPushAll, DiscoveryServer.startPush and the
// per-connection push goroutine it starts (startPush.func1), XdsConnection.
// Issue: istio/istio#14611 "Pilot ADS push deadlock"; the lock came in with
// PR #14254 "Protect ads connection with mutex to fix race condition"; fixed
// by PR #14635 "Fix ads deadlock and race condition".
//
// PR #14254 protected the LastPush/LastPushFailure fields of an XdsConnection
// with the connection's mutex inside the push goroutine. When a push to a slow
// Envoy times out, the goroutine locks client.mu, looks at LastPushFailure and
// then retries with `goto Retry`. The first timeout records the failure time
// and unlocks; the "repeated failure" branch unlocks before giving up after
// ten seconds; but a timeout that happens less than ten seconds after the first
// one falls out of the else branch and jumps back to Retry with client.mu still
// held. The next timeout of the same goroutine locks client.mu again and blocks
// on itself (go-deadlock reported "Duplicate locking" at startPush.func1), so
// the push never finishes, the concurrent-push slot is never released, and
// AdsPushAll waits for it forever. After twenty such stuck goroutines Pilot
// stopped pushing altogether. The fix drops the mutex from this path: the
// failure time becomes a local variable of the push goroutine, so nothing is
// left locked across the retry.
package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// PushTimeout is 5s in Pilot; scaled down so the program runs quickly.
var PushTimeout = 20 * time.Millisecond

var timeZero time.Time

var (
	adsClients      = map[string]*XdsConnection{}
	adsClientsMutex sync.RWMutex

	pushTimeouts        atomic.Int64
	pushTimeoutFailures atomic.Int64

	versionMu sync.RWMutex
	version   = "2019-06-06T00:00:00Z/1"
)

func versionInfo() string {
	versionMu.RLock()
	defer versionMu.RUnlock()
	return version
}

type PushContext struct{ Version string }

type XdsEvent struct {
	push               *PushContext
	pending            *sync.WaitGroup
	version            string
	edsUpdatedServices map[string]struct{}
}

// DiscoveryStream is the part of the ADS stream the push path uses.
type DiscoveryStream interface {
	Context() context.Context
}

type grpcStream struct{ ctx context.Context }

func (g *grpcStream) Context() context.Context { return g.ctx }

type XdsConnection struct {
	// Mutex to protect changes to this XDS connection
	mu sync.RWMutex

	ConID  string
	stream DiscoveryStream

	pushChannel chan *XdsEvent

	LastPush time.Time
}

type DiscoveryServer struct {
	concurrentPushLimit chan struct{}
}

func adsLog(format string, args ...interface{}) { fmt.Printf("ads: "+format+"\n", args...) }

// AdsPushAll pushes the new config to every connected sidecar.
func (s *DiscoveryServer) AdsPushAll(version string, push *PushContext, full bool, edsUpdates map[string]struct{}) {
	tstart := time.Now()
	s.startPush(version, push, tstart, full, edsUpdates)
}

func (s *DiscoveryServer) startPush(version string, push *PushContext, tstart time.Time, full bool, edsUpdates map[string]struct{}) {
	adsClientsMutex.RLock()
	pending := []*XdsConnection{}
	for _, v := range adsClients {
		pending = append(pending, v)
	}
	adsClientsMutex.RUnlock()

	var pendingPush sync.WaitGroup
	wg := sync.WaitGroup{}
	for _, c := range pending {
		client := c
		s.concurrentPushLimit <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() {
				<-s.concurrentPushLimit
				wg.Done()
			}()

			edsOnly := edsUpdates
			if full {
				edsOnly = nil
			}

			// The failure time is tracked per push, so two pushes to the same
			// connection cannot disturb each other and no lock is needed.
			lastPushFailure := timeZero

		Retry:
			currentVersion := versionInfo()
			// Stop attempting to push
			if version != currentVersion && full {
				adsLog("PushAll abort %s, push with newer version %s in progress", version, currentVersion)
				return
			}

			select {
			case client.pushChannel <- &XdsEvent{
				push:               push,
				pending:            &pendingPush,
				version:            version,
				edsUpdatedServices: edsOnly,
			}:
				client.mu.Lock()
				client.LastPush = time.Now()
				client.mu.Unlock()
			case <-client.stream.Context().Done(): // grpc stream was closed
				adsLog("Client closed connection %v", client.ConID)
			case <-time.After(PushTimeout):
				// This may happen to some clients if the other side is in a bad state and can't receive.
				// The tests were catching this - one of the client was not reading.
				pushTimeouts.Add(1)
				if lastPushFailure.IsZero() {
					lastPushFailure = time.Now()
					adsLog("Failed to push, client busy %s", client.ConID)
				}
				if time.Since(lastPushFailure) > 10*time.Second {
					adsLog("Repeated failure to push %s", client.ConID)
					// unfortunately grpc go doesn't allow closing (unblocking) the stream.
					pushTimeoutFailures.Add(1)
					return
				}

				goto Retry
			}
		}()
	}

	wg.Wait()
	adsLog("PushAll done %s %v", version, time.Since(tstart))
}

func (s *DiscoveryServer) addCon(conID string, con *XdsConnection) {
	adsClientsMutex.Lock()
	defer adsClientsMutex.Unlock()
	adsClients[conID] = con
}

func main() {
	s := &DiscoveryServer{concurrentPushLimit: make(chan struct{}, 20)}

	// An Envoy whose ADS stream is alive but which stops reading for a
	// while (it is busy applying a large config).
	con := &XdsConnection{
		ConID:       "sidecar~10.0.0.7~reviews-v1.default-1",
		stream:      &grpcStream{ctx: context.Background()},
		pushChannel: make(chan *XdsEvent),
	}
	s.addCon(con.ConID, con)

	// The Envoy's receive loop comes back after a few push timeouts.
	go func() {
		time.Sleep(5*PushTimeout + 10*time.Millisecond)
		ev := <-con.pushChannel
		adsLog("%s received push %s", con.ConID, ev.version)
	}()

	s.AdsPushAll(versionInfo(), &PushContext{Version: versionInfo()}, true, nil)
	fmt.Println("timeouts:", pushTimeouts.Load())
}
