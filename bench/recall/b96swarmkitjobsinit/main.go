// Project: moby/swarmkit (manager/orchestrator/jobs/orchestrator.go), 2020 (approximate; jobs orchestrator, Docker 20.10 era).
// Bug: Orchestrator.init calls checkTasksFunc (taskinit.CheckTasks, which runs MemoryStore.Batch and takes updateLock)
// inside the store.ViewAndWatch callback, but ViewAndWatch runs that callback inside MemoryStore.Update, which already holds updateLock.
package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

type Service struct{ ID, Mode string }
type Task struct{ ID, ServiceID string }
type Event interface{}
type EventCreateService struct{ Service *Service }

type ReadTx interface{ snapshot() *readTx }
type Tx interface {
	ReadTx
	CreateTask(t *Task) error
	CreateService(s *Service) error
}

type readTx struct {
	services map[string]*Service
	tasks    map[string]*Task
}

func (r *readTx) snapshot() *readTx { return r }

type tx struct {
	*readTx
	changelist []Event
}

func (t *tx) CreateTask(task *Task) error { t.tasks[task.ID] = task; return nil }
func (t *tx) CreateService(s *Service) error {
	t.services[s.ID] = s
	t.changelist = append(t.changelist, EventCreateService{s})
	return nil
}
func FindServices(r ReadTx) ([]*Service, error) {
	return slices.Collect(maps.Values(r.snapshot().services)), nil
}
func FindTasks(r ReadTx) ([]*Task, error) {
	return slices.Collect(maps.Values(r.snapshot().tasks)), nil
}

// MemoryStore is a concurrency-safe, in-memory implementation of the Store interface.
type MemoryStore struct {
	updateLock sync.Mutex   // only one write transaction at a time
	mu         sync.RWMutex // protects the committed snapshot (memdb in the real store)
	data       readTx
	watchers   []chan Event
}

func (s *MemoryStore) copyData() *readTx {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return &readTx{services: maps.Clone(s.data.services), tasks: maps.Clone(s.data.tasks)}
}

func (s *MemoryStore) View(cb func(ReadTx)) { cb(s.copyData()) }

// Update executes a read/write transaction.
func (s *MemoryStore) Update(cb func(Tx) error) error {
	s.updateLock.Lock()
	defer s.updateLock.Unlock()
	return s.update(cb)
}

func (s *MemoryStore) update(cb func(Tx) error) error {
	t := &tx{readTx: s.copyData()}
	if err := cb(t); err != nil {
		return err
	}
	s.mu.Lock()
	s.data = *t.readTx
	s.mu.Unlock()
	for _, ev := range t.changelist {
		for _, w := range s.watchers {
			w <- ev
		}
	}
	return nil
}

type Batch struct{ store *MemoryStore }

// Batch performs one or more transactions that allow reads and writes.
func (s *MemoryStore) Batch(cb func(*Batch) error) error {
	s.updateLock.Lock()
	defer s.updateLock.Unlock()
	return cb(&Batch{store: s})
}

// ViewAndWatch calls a callback which can observe the state of this MemoryStore and also creates a watch channel.
func ViewAndWatch(s *MemoryStore, cb func(ReadTx) error) (watch chan Event, cancel func(), err error) {
	// Using Update to lock the store and guarantee consistency between
	// the watcher and the state seen by the callback.
	err = s.Update(func(tx Tx) error {
		if err := cb(tx); err != nil {
			return err
		}
		watch = make(chan Event, 16)
		s.watchers = append(s.watchers, watch) // watch queue, guarded by updateLock here
		return nil
	})
	return watch, func() {}, err
}

type InitHandler interface {
	IsRelatedService(service *Service) bool
	FixTask(ctx context.Context, batch *Batch, t *Task)
}
type SupervisorInterface interface{}

// CheckTasks fixes tasks in the store before the orchestrator runs.
func CheckTasks(ctx context.Context, s *MemoryStore, readTx ReadTx, initHandler InitHandler, startSupervisor SupervisorInterface) error {
	return s.Batch(func(batch *Batch) error {
		tasks, _ := FindTasks(readTx)
		for _, t := range tasks {
			if svc := readTx.snapshot().services[t.ServiceID]; svc != nil && initHandler.IsRelatedService(svc) {
				initHandler.FixTask(ctx, batch, t)
			}
		}
		return nil
	})
}

type Reconciler interface {
	InitHandler
	ReconcileService(id string) error
}

type reconciler struct {
	store      *MemoryStore
	mode       string
	reconciled chan string
}

func (r *reconciler) IsRelatedService(s *Service) bool                   { return s.Mode == r.mode }
func (r *reconciler) FixTask(ctx context.Context, batch *Batch, t *Task) {}
func (r *reconciler) ReconcileService(id string) error {
	err := r.store.Update(func(tx Tx) error { return tx.CreateTask(&Task{ID: id + ".1", ServiceID: id}) })
	r.reconciled <- id
	return err
}

type Orchestrator struct {
	store                *MemoryStore
	replicatedReconciler Reconciler
	globalReconciler     Reconciler
	restartSupervisor    SupervisorInterface
	checkTasksFunc       func(context.Context, *MemoryStore, ReadTx, InitHandler, SupervisorInterface) error
	watchChan            chan Event
}

func (o *Orchestrator) init(ctx context.Context) {
	var services []*Service
	o.watchChan, _, _ = ViewAndWatch(o.store, func(tx ReadTx) error {
		services, _ = FindServices(tx)
		o.checkTasksFunc(ctx, o.store, tx, o.replicatedReconciler, o.restartSupervisor)
		o.checkTasksFunc(ctx, o.store, tx, o.globalReconciler, o.restartSupervisor)
		return nil
	})
	for _, service := range services {
		if o.replicatedReconciler.IsRelatedService(service) {
			o.replicatedReconciler.ReconcileService(service.ID)
		}
	}
}

func (o *Orchestrator) Run(ctx context.Context) {
	o.init(ctx)
	for ev := range o.watchChan {
		if e, ok := ev.(EventCreateService); ok && o.replicatedReconciler.IsRelatedService(e.Service) {
			o.replicatedReconciler.ReconcileService(e.Service.ID)
		}
	}
}

func main() {
	s := &MemoryStore{data: readTx{services: map[string]*Service{"svc0": {"svc0", "replicated-job"}}, tasks: map[string]*Task{"svc0.1": {ID: "svc0.1", ServiceID: "svc0"}}}}
	done := make(chan string, 4)
	o := &Orchestrator{store: s, checkTasksFunc: CheckTasks,
		replicatedReconciler: &reconciler{store: s, mode: "replicated-job", reconciled: done},
		globalReconciler:     &reconciler{store: s, mode: "global-job", reconciled: done}}
	go o.Run(context.Background()) // the manager became leader
	time.Sleep(50 * time.Millisecond)
	s.Update(func(tx Tx) error { return tx.CreateService(&Service{"svc1", "replicated-job"}) }) // control API creates a job
	fmt.Println("reconciled", <-done, <-done)
}
