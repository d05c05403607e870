// Fixed twin (PR #2234 applied).
// Project: googleforgames/agones (game-server orchestration on Kubernetes),
// the SDK server sidecar, v1.15/v1.16, 2021.
// Files: pkg/sdkserver/sdkserver.go (SDKServer.syncGameServer, updateState,
// enqueueState, Ready, stopReserveTimer), pkg/util/workerqueue/workerqueue.go.
// PR: googleforgames/agones#2234 "Unlock mutex before returning on error in
// SDKServer.updateState" (Aug 2021).
//
// The SDK server keeps the state requested by the game server in gsState,
// guarded by gsUpdateMutex, and applies it to the GameServer resource from a
// work queue: the worker pops the "updateState" key, syncGameServer dispatches
// on it and updateState read-locks gsUpdateMutex to look at gsState. When the
// state is still empty it returns an error, and that early return skips the
// RUnlock. The worker goes on, but the read lock is never released. The next
// SDK call from the game server, Ready(), first stops the reserve timer, which
// takes gsUpdateMutex for writing and waits forever for the leaked reader; the
// game server's gRPC call never returns, and every later SDK call and sync
// that read-locks the mutex queues behind the stuck writer. The fix adds the
// missing RUnlock on the empty-state return.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type GameServerState string

const (
	GameServerStateRequestReady GameServerState = "RequestReady"
	GameServerStateUnhealthy    GameServerState = "Unhealthy"
)

type GameServer struct {
	Name   string
	Labels map[string]string
	State  GameServerState
}

// gameServerStore stands in for the lister/clientset pair.
type gameServerStore struct {
	mu  sync.Mutex
	gss map[string]*GameServer
}

func (g *gameServerStore) Get(name string) (*GameServer, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gs, ok := g.gss[name]; ok {
		cp := *gs
		return &cp, nil
	}
	return nil, errors.New("not found")
}

func (g *gameServerStore) Update(gs *GameServer) (*GameServer, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cp := *gs
	g.gss[gs.Name] = &cp
	return gs, nil
}

// Operation is a synchronisation action
type Operation string

const updateState Operation = "updateState"

// WorkerQueue is the rate-limited queue the SDK server syncs through.
type WorkerQueue struct {
	queue       chan string
	SyncHandler func(ctx context.Context, key string) error
}

func NewWorkerQueue(handler func(ctx context.Context, key string) error) *WorkerQueue {
	return &WorkerQueue{queue: make(chan string, 16), SyncHandler: handler}
}

func (wq *WorkerQueue) Enqueue(key string) { wq.queue <- key }

func (wq *WorkerQueue) processNextWorkItem(ctx context.Context) bool {
	key := <-wq.queue
	if err := wq.SyncHandler(ctx, key); err != nil {
		fmt.Printf("workerqueue: error syncing %q: %v\n", key, err)
	}
	return true
}

func (wq *WorkerQueue) Run(ctx context.Context) {
	for wq.processNextWorkItem(ctx) {
	}
}

type Empty struct{}

type SDKServer struct {
	gameServerName string
	namespace      string
	gameServers    *gameServerStore
	workerqueue    *WorkerQueue

	gsUpdateMutex     sync.RWMutex
	gsState           GameServerState
	gsReserveDuration *time.Duration
	reserveTimer      *time.Timer
}

func NewSDKServer(gameServerName, namespace string, store *gameServerStore) *SDKServer {
	s := &SDKServer{gameServerName: gameServerName, namespace: namespace, gameServers: store}
	s.workerqueue = NewWorkerQueue(s.syncGameServer)
	return s
}

// syncGameServer synchronises the GameServer with the requested operations.
func (s *SDKServer) syncGameServer(ctx context.Context, key string) error {
	switch Operation(key) {
	case updateState:
		return s.updateState(ctx)
	}
	return fmt.Errorf("could not sync game server key: %s", key)
}

// updateState sets the GameServer Status's state to the one persisted in SDKServer,
// i.e. SDKServer.gsState.
func (s *SDKServer) updateState(ctx context.Context) error {
	s.gsUpdateMutex.RLock()
	if len(s.gsState) == 0 {
		s.gsUpdateMutex.RUnlock()
		return fmt.Errorf("could not update GameServer %s/%s to empty state", s.namespace, s.gameServerName)
	}
	s.gsUpdateMutex.RUnlock()

	gs, err := s.gameServers.Get(s.gameServerName)
	if err != nil {
		return err
	}

	// If the state is currently unhealthy, you can't go back to Ready.
	if gs.State == GameServerStateUnhealthy {
		return nil
	}

	s.gsUpdateMutex.RLock()
	gs.State = s.gsState
	s.gsUpdateMutex.RUnlock()

	_, err = s.gameServers.Update(gs)
	return err
}

// enqueueState enqueue a State change request into the workerqueue
func (s *SDKServer) enqueueState(state GameServerState) {
	s.gsUpdateMutex.Lock()
	s.gsState = state
	s.gsUpdateMutex.Unlock()
	s.workerqueue.Enqueue(string(updateState))
}

// Ready enters the RequestReady state change for this GameServer into
// the workqueue so it can be updated
func (s *SDKServer) Ready(ctx context.Context, e *Empty) (*Empty, error) {
	s.stopReserveTimer()
	s.enqueueState(GameServerStateRequestReady)
	return e, nil
}

// stopReserveTimer stops the reserve timer. This is a no-op and safe to call if the timer is nil
func (s *SDKServer) stopReserveTimer() {
	s.gsUpdateMutex.Lock()
	defer s.gsUpdateMutex.Unlock()

	if s.reserveTimer != nil {
		s.reserveTimer.Stop()
	}
	s.gsReserveDuration = nil
}

func main() {
	store := &gameServerStore{gss: map[string]*GameServer{"simple-game-server-7pjrq": {Name: "simple-game-server-7pjrq", Labels: map[string]string{}}}}
	s := NewSDKServer("simple-game-server-7pjrq", "default", store)
	ctx := context.Background()
	go s.workerqueue.Run(ctx)

	// A state sync is processed before the game server has asked for any state.
	s.workerqueue.Enqueue(string(updateState))
	time.Sleep(20 * time.Millisecond)

	// The game server finished loading and calls SDK.Ready() over gRPC.
	_, _ = s.Ready(ctx, &Empty{})
	time.Sleep(20 * time.Millisecond)
	gs, _ := store.Get("simple-game-server-7pjrq")
	fmt.Println("GameServer state:", gs.State)
}
