// Docker Swarm classic (docker/swarm, archived as docker-archive/classicswarm),
// cluster/engine.go after PR #2842 "Fix a deadlock in RefreshContainers" (Feb.
// 2018). That PR #2860 (May 2018), which reworked CheckConnectionErr "to avoid
// race condition and unnecessary blocks", removed this path is reconstructed.
//
// Engine embeds a sync.RWMutex. PR #2842 made RefreshContainers hold the write
// lock for the whole refresh and threaded a lockSet flag through the helpers
// it calls (checkConnectionErr, setState, incFailureCount, resetFailureCount)
// so that they skip locking. But the recovery branch of checkConnectionErr,
// taken when a call succeeds while the engine is flagged unhealthy, logs the
// retry count through getFailureCount, which read-locks the engine. When the
// network flaps after the refresh loop's health check (other API calls fail
// and flag the engine unhealthy) and the refresh's ContainerList succeeds, the
// refresh loop read-locks the RWMutex it holds for writing and blocks forever;
// every later "docker ps" (Cluster.Containers -> Engine.Containers) waits too.
//
// The fixed twin reads the failure count directly when lockSet is true.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"
)

type engineState int

const (
	stateUnhealthy engineState = iota + 1
	stateHealthy
)

type SwarmAPIClient interface {
	ContainerList(ctx context.Context) ([]string, error)
	NegotiateAPIVersion(ctx context.Context)
}

type EngineOpts struct{ FailureRetry int }

type Engine struct {
	sync.RWMutex
	Name         string
	containers   []string
	apiClient    SwarmAPIClient
	state        engineState
	failureCount int
	opts         *EngineOpts
}

var errConnectionRefused = errors.New("dial tcp 10.0.0.7:2375: connect: connection refused")

func IsConnectionError(err error) bool { return errors.Is(err, errConnectionRefused) }

func (e *Engine) IsHealthy() bool {
	e.RLock()
	defer e.RUnlock()
	return e.state == stateHealthy
}

func (e *Engine) getFailureCount() int {
	e.RLock()
	defer e.RUnlock()
	return e.failureCount
}

func (e *Engine) setState(state engineState, lockSet bool) {
	if !lockSet {
		e.Lock()
		defer e.Unlock()
	}
	e.state = state
}

func (e *Engine) incFailureCount(lockSet bool) {
	if !lockSet {
		e.Lock()
		defer e.Unlock()
	}
	e.failureCount++
	if e.state == stateHealthy && e.failureCount >= e.opts.FailureRetry {
		e.state = stateUnhealthy
		log.Printf("Flagging engine %s as unhealthy. Connect failed %d times", e.Name, e.failureCount)
	}
}

func (e *Engine) resetFailureCount(lockSet bool) {
	if !lockSet {
		e.Lock()
		defer e.Unlock()
	}
	e.failureCount = 0
}

func (e *Engine) CheckConnectionErr(err error) { e.checkConnectionErr(err, false) }

func (e *Engine) checkConnectionErr(err error, lockSet bool) {
	if err == nil {
		if e.state == stateUnhealthy {
			log.Printf("Engine %s came back to life after %d retries. Hooray!", e.Name, e.getFailureCount())
			e.setState(stateHealthy, lockSet)
		}
		e.resetFailureCount(lockSet)
		return
	}
	if IsConnectionError(err) {
		e.incFailureCount(lockSet)
	}
}

func (e *Engine) updateSpecs() {
	e.apiClient.NegotiateAPIVersion(context.Background())
	e.Lock()
	defer e.Unlock()
	e.Name = "node-7"
}

func (e *Engine) RefreshContainers(full bool) error {
	e.Lock()
	defer e.Unlock()
	ids, err := e.apiClient.ContainerList(context.Background())
	e.checkConnectionErr(err, true)
	if err != nil {
		return err
	}
	e.containers = ids
	return nil
}

func (e *Engine) refreshContainer(ID string) error {
	_, err := e.apiClient.ContainerList(context.Background())
	e.CheckConnectionErr(err)
	return err
}

const specUpdateInterval = 5 * time.Minute

func (e *Engine) refreshLoopOnce(lastSpecUpdatedAt time.Time) {
	if !e.IsHealthy() || time.Since(lastSpecUpdatedAt) > specUpdateInterval {
		e.updateSpecs()
	}
	if err := e.RefreshContainers(false); err != nil {
		log.Printf("Engine refresh failed: %v", err)
	}
}

func (e *Engine) Containers() []string {
	e.RLock()
	defer e.RUnlock()
	return append([]string(nil), e.containers...)
}

type Cluster struct {
	sync.RWMutex
	engines map[string]*Engine
}

func (c *Cluster) Containers() []string {
	c.RLock()
	defer c.RUnlock()
	var out []string
	for _, e := range c.engines {
		out = append(out, e.Containers()...)
	}
	return out
}

type flakyClient struct{ down atomic.Bool }

func (f *flakyClient) ContainerList(ctx context.Context) ([]string, error) {
	if f.down.Load() {
		return nil, errConnectionRefused
	}
	return []string{"3f4e9a", "b07c21"}, nil
}

func (f *flakyClient) NegotiateAPIVersion(ctx context.Context) { time.Sleep(50 * time.Millisecond) }

func main() {
	client := &flakyClient{}
	e := &Engine{Name: "node-7", apiClient: client, state: stateHealthy, opts: &EngineOpts{FailureRetry: 2}}
	c := &Cluster{engines: map[string]*Engine{"node-7": e}}

	go e.refreshLoopOnce(time.Time{})
	time.Sleep(10 * time.Millisecond)
	client.down.Store(true)
	for i := 0; i < e.opts.FailureRetry; i++ {
		fmt.Println("docker inspect:", e.refreshContainer("3f4e9a"))
	}
	client.down.Store(false)
	time.Sleep(100 * time.Millisecond)
	fmt.Println("docker ps:", c.Containers())
}
