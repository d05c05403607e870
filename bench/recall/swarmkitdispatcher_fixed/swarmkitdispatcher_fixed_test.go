// Project: docker/swarmkit (manager/dispatcher/dispatcher.go).
// Bug (approximate): UpdateTaskStatus, once the pending batch reached
// maxBatchItems, signalled the unbuffered processUpdatesTrigger channel while
// still holding taskUpdatesLock. The dispatcher's run loop, woken by the batch
// timer, was inside processUpdates() waiting for taskUpdatesLock, so nobody
// could receive the trigger.
// Fix: release taskUpdatesLock before signalling processUpdatesTrigger.
package swarmkitdispatcher_fixed

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

const maxBatchItems = 3

type TaskStatus struct {
	State   string
	Message string
}

type MemoryStore struct {
	mu    sync.Mutex
	tasks map[string]*TaskStatus
}

func (s *MemoryStore) Batch(cb func(tasks map[string]*TaskStatus) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cb(s.tasks)
}

type Dispatcher struct {
	mu      sync.Mutex
	running bool
	nodes   map[string]bool

	taskUpdatesLock       sync.Mutex
	taskUpdates           map[string]*TaskStatus
	processUpdatesTrigger chan struct{}
	batchTimer            chan time.Time

	store *MemoryStore
}

func (d *Dispatcher) isRunning() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.running {
		return errors.New("dispatcher is stopped")
	}
	return nil
}

func (d *Dispatcher) Run(ctx context.Context) {
	for {
		select {
		case <-d.batchTimer:
			d.processUpdates(ctx)
		case <-d.processUpdatesTrigger:
			d.processUpdates(ctx)
		case <-ctx.Done():
			return
		}
	}
}

func (d *Dispatcher) processUpdates(ctx context.Context) {
	d.taskUpdatesLock.Lock()
	updates := d.taskUpdates
	d.taskUpdates = make(map[string]*TaskStatus)
	d.taskUpdatesLock.Unlock()
	if len(updates) == 0 {
		return
	}
	_ = d.store.Batch(func(tasks map[string]*TaskStatus) error {
		for id, st := range updates {
			tasks[id] = st
		}
		return nil
	})
}

// UpdateTaskStatus is the RPC agents use to report task state changes.
func (d *Dispatcher) UpdateTaskStatus(ctx context.Context, nodeID string, updates map[string]*TaskStatus) error {
	if err := d.isRunning(); err != nil {
		return err
	}
	d.taskUpdatesLock.Lock()
	for id, st := range updates {
		d.taskUpdates[id] = st
	}
	numUpdates := len(d.taskUpdates)
	d.taskUpdatesLock.Unlock() // FIX: unlock before signalling
	if numUpdates >= maxBatchItems {
		time.Sleep(50 * time.Millisecond) // lets the batch timer fire
		d.processUpdatesTrigger <- struct{}{}
	}
	return nil
}

func TestUpdateTaskStatusBatchFull(t *testing.T) {
	d := &Dispatcher{
		running:               true,
		nodes:                 map[string]bool{"node1": true},
		taskUpdates:           map[string]*TaskStatus{},
		processUpdatesTrigger: make(chan struct{}),
		batchTimer:            make(chan time.Time, 1),
		store:                 &MemoryStore{tasks: map[string]*TaskStatus{}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.Run(ctx)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		err := d.UpdateTaskStatus(ctx, "node1", map[string]*TaskStatus{
			"t1": {State: "running"}, "t2": {State: "running"}, "t3": {State: "failed"},
		})
		if err != nil {
			t.Errorf("update: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		d.batchTimer <- time.Now() // batch period elapsed
	}()
	wg.Wait()
}
