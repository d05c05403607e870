// Project: docker/swarmkit, now moby/swarmkit (manager/orchestrator/services.go reconcile, manager/orchestrator/updater.go UpdateSupervisor.Update/Updater.Cancel/Run/worker, manager/state/store/memory.go MemoryStore.Batch/Update), June 2016.
// Bug: ReplicatedOrchestrator.reconcile called r.updater.Update inside the
// store.Batch callback, so MemoryStore.updateLock was held while
// UpdateSupervisor.Update cancelled the service's running rolling update with
// Updater.Cancel, which closes stopChan and waits on doneChan. The running
// updater's worker was itself blocked in store.Update on the same updateLock,
// so Run never finished and scaling a service during a rolling update hung the
// orchestrator and every store writer (PR #976 "orchestrator: Fix service
// scaling deadlock": call Update outside the Batch).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Task struct {
	ID, ServiceID, Image string
	Slot                 int
	DesiredState, State  string
}

type Service struct {
	ID, Image   string
	Replicas    int
	Parallelism int
	Delay       time.Duration
}

type watchQueue struct {
	mu   sync.Mutex
	subs map[chan *Task]struct{}
}

func (q *watchQueue) Watch() (chan *Task, func()) {
	ch := make(chan *Task, 64)
	q.mu.Lock()
	q.subs[ch] = struct{}{}
	q.mu.Unlock()
	return ch, func() { q.mu.Lock(); delete(q.subs, ch); q.mu.Unlock() }
}

func (q *watchQueue) Publish(t *Task) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for ch := range q.subs {
		select {
		case ch <- t:
		default:
		}
	}
}

// MemoryStore is a concurrency-safe store for cluster objects.
type MemoryStore struct {
	updateLock sync.Mutex   // serializes writers (held while proposing to raft)
	mu         sync.RWMutex // stands in for the memdb transactions
	tasks      map[string]*Task
	queue      *watchQueue
	nextID     int
}

type Tx struct {
	s       *MemoryStore
	changes []*Task
}

func (tx *Tx) GetTask(id string) *Task {
	tx.s.mu.RLock()
	defer tx.s.mu.RUnlock()
	if t := tx.s.tasks[id]; t != nil {
		c := *t
		return &c
	}
	return nil
}

func (tx *Tx) CreateTask(t *Task) {
	tx.s.nextID++
	t.ID = fmt.Sprintf("task%d", tx.s.nextID)
	tx.UpdateTask(t)
}

func (tx *Tx) UpdateTask(t *Task) {
	tx.s.mu.Lock()
	tx.s.tasks[t.ID] = t
	tx.s.mu.Unlock()
	tx.changes = append(tx.changes, t)
}

func (s *MemoryStore) commit(tx *Tx) {
	for _, t := range tx.changes {
		s.queue.Publish(t)
	}
}

func (s *MemoryStore) View(cb func(tx *Tx)) { cb(&Tx{s: s}) }

func (s *MemoryStore) Update(cb func(tx *Tx) error) error {
	s.updateLock.Lock()
	defer s.updateLock.Unlock()
	tx := &Tx{s: s}
	err := cb(tx)
	if err == nil {
		s.commit(tx)
	}
	return err
}

type Batch struct{ tx *Tx }

func (b *Batch) Update(cb func(tx *Tx) error) error { return cb(b.tx) }

// Batch performs one or more transactions that allow reads and writes.
func (s *MemoryStore) Batch(cb func(*Batch) error) error {
	s.updateLock.Lock()
	defer s.updateLock.Unlock()
	b := &Batch{tx: &Tx{s: s}}
	err := cb(b)
	s.commit(b.tx)
	return err
}

// UpdateSupervisor supervises a set of updates.
type UpdateSupervisor struct {
	store   *MemoryStore
	updates map[string]*Updater
	l       sync.Mutex
}

// Update starts an Update of `tasks` belonging to `service` in the background and returns immediately.
// If an update for that service was already in progress, it will be cancelled before the new one starts.
func (u *UpdateSupervisor) Update(ctx context.Context, service *Service, tasks []*Task) {
	u.l.Lock()
	defer u.l.Unlock()
	if update, ok := u.updates[service.ID]; ok {
		update.Cancel()
	}
	update := &Updater{store: u.store, stopChan: make(chan struct{}), doneChan: make(chan struct{})}
	u.updates[service.ID] = update
	go update.Run(ctx, service, tasks)
}

// Updater updates a set of tasks to a new version.
type Updater struct {
	store    *MemoryStore
	stopChan chan struct{}
	doneChan chan struct{}
}

// Cancel cancels the current update immediately. It blocks until the cancellation is confirmed.
func (u *Updater) Cancel() {
	close(u.stopChan)
	<-u.doneChan
}

func (u *Updater) Run(ctx context.Context, service *Service, tasks []*Task) {
	defer close(u.doneChan)
	var dirtyTasks []*Task
	for _, t := range tasks {
		if t.Image != service.Image {
			dirtyTasks = append(dirtyTasks, t)
		}
	}
	taskQueue := make(chan *Task)
	var wg sync.WaitGroup
	wg.Add(service.Parallelism)
	for i := 0; i < service.Parallelism; i++ {
		go func() { u.worker(ctx, service, taskQueue); wg.Done() }()
	}
	for _, t := range dirtyTasks {
		select {
		case <-u.stopChan:
		case taskQueue <- t:
		}
	}
	close(taskQueue)
	wg.Wait()
}

func (u *Updater) worker(ctx context.Context, service *Service, queue <-chan *Task) {
	for t := range queue {
		updated := &Task{ServiceID: service.ID, Image: service.Image, Slot: t.Slot, DesiredState: "RUNNING"}
		u.updateTask(t, updated)
		select {
		case <-time.After(service.Delay):
		case <-u.stopChan:
			return
		}
	}
}

func (u *Updater) updateTask(original, updated *Task) {
	taskUpdates, cancel := u.store.queue.Watch()
	defer cancel()
	// Atomically create the updated task and bring down the old one.
	u.store.Update(func(tx *Tx) error {
		t := tx.GetTask(original.ID)
		t.DesiredState = "SHUTDOWN"
		tx.UpdateTask(t)
		tx.CreateTask(updated)
		return nil
	})
	for { // Wait for the new task to come up.
		select {
		case e := <-taskUpdates:
			if e.ID == updated.ID && e.State == "RUNNING" {
				return
			}
		case <-u.stopChan:
			return
		}
	}
}

type ReplicatedOrchestrator struct {
	store   *MemoryStore
	updater *UpdateSupervisor
}

func (r *ReplicatedOrchestrator) reconcile(ctx context.Context, service *Service) {
	var runningTasks []*Task
	r.store.View(func(tx *Tx) {
		tx.s.mu.RLock()
		for _, t := range tx.s.tasks {
			if t.ServiceID == service.ID && t.DesiredState == "RUNNING" {
				runningTasks = append(runningTasks, t)
			}
		}
		tx.s.mu.RUnlock()
	})
	r.store.Batch(func(batch *Batch) error {
		switch {
		case service.Replicas > len(runningTasks):
			// Update all current tasks then add missing tasks
			r.updater.Update(ctx, service, runningTasks)
			for i := len(runningTasks); i < service.Replicas; i++ {
				batch.Update(func(tx *Tx) error {
					tx.CreateTask(&Task{ServiceID: service.ID, Image: service.Image, Slot: i + 1, DesiredState: "RUNNING"})
					return nil
				})
			}
		default:
			r.updater.Update(ctx, service, runningTasks)
		}
		return nil
	})
}

func main() {
	s := &MemoryStore{tasks: map[string]*Task{}, queue: &watchQueue{subs: map[chan *Task]struct{}{}}}
	for i := 1; i <= 2; i++ {
		s.tasks[fmt.Sprint("old", i)] = &Task{ID: fmt.Sprint("old", i), ServiceID: "web", Image: "nginx:1.10", Slot: i, DesiredState: "RUNNING", State: "RUNNING"}
	}
	ctx := context.Background()
	r := &ReplicatedOrchestrator{store: s, updater: &UpdateSupervisor{store: s, updates: map[string]*Updater{}}}
	events := make(chan *Service)
	reconciled := make(chan string)
	go func() { // orchestrator run loop, fed by EventUpdateService
		for svc := range events {
			r.reconcile(ctx, svc)
			reconciled <- fmt.Sprintf("%s: %d replicas of %s", svc.ID, svc.Replicas, svc.Image)
		}
	}()
	agent, _ := s.queue.Watch()
	go func() { // the node's agent starts new tasks and reports them running
		for t := range agent {
			if t.DesiredState == "RUNNING" && t.State == "" {
				time.Sleep(time.Millisecond)
				s.Update(func(tx *Tx) error { c := tx.GetTask(t.ID); c.State = "RUNNING"; tx.UpdateTask(c); return nil })
			}
		}
	}()

	// docker service update --image nginx:1.11 --update-parallelism 1 --update-delay 15ms web
	events <- &Service{ID: "web", Image: "nginx:1.11", Replicas: 2, Parallelism: 1, Delay: 15 * time.Millisecond}
	fmt.Println(<-reconciled)
	time.Sleep(5 * time.Millisecond)

	// The dispatcher applies a large batch of task status updates from other nodes.
	go s.Batch(func(b *Batch) error {
		time.Sleep(25 * time.Millisecond)
		return nil
	})
	time.Sleep(2 * time.Millisecond)

	// docker service scale web=3, while the rolling update is still running
	events <- &Service{ID: "web", Image: "nginx:1.11", Replicas: 3, Parallelism: 1, Delay: 15 * time.Millisecond}
	fmt.Println(<-reconciled)
}
