// Project: longhorn-engine (pkg/controller/control.go)
// Bug: addReplicaNoLock(backend, address, snapshot bool, mode) is called with
// c.Lock() already held. Start() passes snapshot=false, but AddReplica() (used
// when rebuilding a WO replica) passes the constant snapshot=true, and that
// branch takes the pre-add snapshot through the exported c.Snapshot(), which
// does c.Lock() again: AddReplica -> addReplica (Lock) -> addReplicaNoLock ->
// Snapshot (Lock) hangs the engine.
// Fix: the snapshot=true branch uses the lock-free c.snapshotNoLock().

package b21longhornctl

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

type Mode string

const (
	RW  Mode = "RW"
	WO  Mode = "WO"
	ERR Mode = "ERR"
)

const maximumSnapshotCount = 250

type Replica struct {
	Address string
	Mode    Mode
}

type Backend interface {
	Snapshot(name string, created string) error
	RemainSnapshots() (int, error)
	Close() error
}

type fakeBackend struct {
	mu        sync.Mutex
	address   string
	snapshots []string
}

func (f *fakeBackend) Snapshot(name string, created string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snapshots = append(f.snapshots, name)
	return nil
}

func (f *fakeBackend) RemainSnapshots() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maximumSnapshotCount - len(f.snapshots), nil
}

func (f *fakeBackend) Close() error { return nil }

type Controller struct {
	sync.RWMutex
	Name       string
	size       int64
	replicas   []Replica
	backends   map[string]Backend
	frontendUp bool
	snapSeq    int
}

func NewController(name string) *Controller {
	return &Controller{Name: name, backends: make(map[string]Backend)}
}

func (c *Controller) createBackend(address string) (Backend, error) {
	if address == "" {
		return nil, errors.New("invalid replica address")
	}
	return &fakeBackend{address: address}, nil
}

func (c *Controller) Start(addresses ...string) error {
	c.Lock()
	defer c.Unlock()

	for _, address := range addresses {
		b, err := c.createBackend(address)
		if err != nil {
			return err
		}
		if err := c.addReplicaNoLock(b, address, false, RW); err != nil {
			return err
		}
	}
	c.frontendUp = true
	return nil
}

func (c *Controller) AddReplica(address string, snapshotRequired bool, mode Mode) error {
	return c.addReplica(address, snapshotRequired, mode)
}

func (c *Controller) addReplica(address string, snapshot bool, mode Mode) error {
	c.Lock()
	defer c.Unlock()

	b, err := c.createBackend(address)
	if err != nil {
		return err
	}
	return c.addReplicaNoLock(b, address, snapshot, mode)
}

func (c *Controller) addReplicaNoLock(newBackend Backend, address string, snapshot bool, mode Mode) error {
	if _, ok := c.backends[address]; ok {
		return fmt.Errorf("replica %s already exists", address)
	}
	if snapshot {
		if _, err := c.Snapshot(""); err != nil {
			return err
		}
	}
	c.replicas = append(c.replicas, Replica{Address: address, Mode: mode})
	c.backends[address] = newBackend
	return nil
}

func (c *Controller) Snapshot(name string) (string, error) {
	c.Lock()
	defer c.Unlock()
	return c.snapshotNoLock(name)
}

func (c *Controller) snapshotNoLock(name string) (string, error) {
	if name == "" {
		c.snapSeq++
		name = fmt.Sprintf("snap-%d-%d", time.Now().Unix(), c.snapSeq)
	}
	created := time.Now().UTC().Format(time.RFC3339)
	for _, b := range c.backends {
		if remain, err := b.RemainSnapshots(); err != nil {
			return "", err
		} else if remain <= 0 {
			return "", errors.New("too many snapshots created")
		}
		if err := b.Snapshot(name, created); err != nil {
			return "", err
		}
	}
	return name, nil
}

func (c *Controller) ListReplicas() []Replica {
	c.RLock()
	defer c.RUnlock()
	return append([]Replica(nil), c.replicas...)
}

func TestAddReplicaForRebuild(t *testing.T) {
	c := NewController("vol-1")
	if err := c.Start("tcp://10.0.0.1:9502"); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		done <- c.AddReplica("tcp://10.0.0.2:9502", true, WO)
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(c.ListReplicas()); n != 2 {
		t.Fatalf("expected 2 replicas, got %d", n)
	}
}
