// Project: v2ray/v2ray-core (common/mux/client.go IncrementalWorkerPicker, common/task/periodic.go), v4.x, late 2018 (approximate).
// Bug: IncrementalWorkerPicker.PickAvailable held p.access while it created the cleanup task and called
// cleanupTask.Start(); task.Periodic.Start runs Execute once synchronously, and Execute is p.cleanupFunc, which takes
// p.access again, so the first mux dispatch self-deadlocks; the fix returns a start flag and starts the task after unlocking.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Periodic is a task that runs periodically.
type Periodic struct {
	Interval time.Duration
	Execute  func() error

	access  sync.Mutex
	timer   *time.Timer
	running bool
}

func (t *Periodic) hasClosed() bool {
	t.access.Lock()
	defer t.access.Unlock()
	return !t.running
}

func (t *Periodic) checkedExecute() error {
	if t.hasClosed() {
		return nil
	}
	if err := t.Execute(); err != nil {
		t.access.Lock()
		t.running = false
		t.access.Unlock()
		return err
	}
	t.access.Lock()
	defer t.access.Unlock()
	if !t.running {
		return nil
	}
	t.timer = time.AfterFunc(t.Interval, func() {
		t.checkedExecute()
	})
	return nil
}

// Start implements common.Runnable.
func (t *Periodic) Start() error {
	t.access.Lock()
	if t.running {
		t.access.Unlock()
		return nil
	}
	t.running = true
	t.access.Unlock()

	if err := t.checkedExecute(); err != nil {
		t.access.Lock()
		t.running = false
		t.access.Unlock()
		return err
	}
	return nil
}

type ClientWorker struct {
	sessions int
	closed   bool
}

func (m *ClientWorker) IsFull() bool { return m.sessions >= 8 }
func (m *ClientWorker) Closed() bool { return m.closed }
func (m *ClientWorker) Dispatch(dest string) bool {
	if m.IsFull() || m.Closed() {
		return false
	}
	m.sessions++
	return true
}

type ClientWorkerFactory interface {
	Create() (*ClientWorker, error)
}

type DialingWorkerFactory struct{}

func (f *DialingWorkerFactory) Create() (*ClientWorker, error) { return &ClientWorker{}, nil }

type WorkerPicker interface {
	PickAvailable() (*ClientWorker, error)
}

type IncrementalWorkerPicker struct {
	Factory ClientWorkerFactory

	access      sync.Mutex
	workers     []*ClientWorker
	cleanupTask *Periodic
}

func (p *IncrementalWorkerPicker) cleanupFunc() error {
	p.access.Lock()
	defer p.access.Unlock()
	if len(p.workers) == 0 {
		return errors.New("no worker")
	}
	p.cleanup()
	return nil
}

func (p *IncrementalWorkerPicker) cleanup() {
	var activeWorkers []*ClientWorker
	for _, w := range p.workers {
		if !w.Closed() {
			activeWorkers = append(activeWorkers, w)
		}
	}
	p.workers = activeWorkers
}

func (p *IncrementalWorkerPicker) findAvailable() int {
	for idx, w := range p.workers {
		if !w.IsFull() {
			return idx
		}
	}
	return -1
}

// PickAvailable (buggy): the cleanup task is started with p.access held.
func (p *IncrementalWorkerPicker) PickAvailable() (*ClientWorker, error) {
	p.access.Lock()
	defer p.access.Unlock()
	idx := p.findAvailable()
	if idx >= 0 {
		n := len(p.workers)
		if n > 1 && idx != n-1 {
			p.workers[n-1], p.workers[idx] = p.workers[idx], p.workers[n-1]
		}
		return p.workers[idx], nil
	}

	p.cleanup()
	worker, err := p.Factory.Create()
	if err != nil {
		return nil, err
	}
	p.workers = append(p.workers, worker)

	if p.cleanupTask == nil {
		p.cleanupTask = &Periodic{
			Interval: time.Second * 30,
			Execute:  p.cleanupFunc,
		}
		if err := p.cleanupTask.Start(); err != nil {
			panic(err)
		}
	}
	return worker, nil
}

type ClientManager struct {
	Enabled bool
	Picker  WorkerPicker
}

func (m *ClientManager) Dispatch(dest string) error {
	for i := 0; i < 16; i++ {
		worker, err := m.Picker.PickAvailable()
		if err != nil {
			return err
		}
		if worker.Dispatch(dest) {
			return nil
		}
	}
	return errors.New("unable to find an available mux client")
}

func main() {
	m := &ClientManager{Enabled: true, Picker: &IncrementalWorkerPicker{Factory: &DialingWorkerFactory{}}}
	for _, dest := range []string{"tcp:example.com:443", "tcp:example.org:80"} {
		if err := m.Dispatch(dest); err != nil {
			fmt.Println("dispatch failed:", err)
			return
		}
		fmt.Println("dispatched", dest)
	}
}
