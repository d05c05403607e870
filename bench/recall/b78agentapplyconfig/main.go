// Project: grafana/agent (pkg/prom/instance manager: BasicManager.ApplyConfig, spawnProcess), v0.4, May 2020.
// Bug: ApplyConfig holds m.mut and, when an instance cannot be updated dynamically, calls proc.Stop(), which
// cancels the instance and waits for its done channel; the goroutine started by spawnProcess only closes done
// after it has taken m.mut to delete the process from the map, so the scraping-service node deadlocks when a
// new version of an existing config is applied (fixed by PR #97: close done before locking the mutex).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Config is an instance config (one Prometheus "instance" per config).
type Config struct {
	Name           string
	ScrapeInterval time.Duration
	RemoteWriteURL string
}

// ErrInvalidUpdate is returned by Update when the change can't be applied without a restart.
var ErrInvalidUpdate = errors.New("invalid dynamic update")

// ManagedInstance is implemented by Instance.
type ManagedInstance interface {
	Run(ctx context.Context) error
	Update(c Config) error
}

// Factory should return an unstarted instance given some config.
type Factory func(c Config) (ManagedInstance, error)

// BasicManager launches instances directly.
type BasicManager struct {
	mut       sync.Mutex
	processes map[string]*managedProcess

	launch Factory
}

// managedProcess represents a goroutine running a ManagedInstance.
type managedProcess struct {
	cfg    Config
	inst   ManagedInstance
	cancel context.CancelFunc
	done   chan bool
}

func (p managedProcess) Stop() {
	p.cancel()
	<-p.done
}

func NewBasicManager(launch Factory) *BasicManager {
	return &BasicManager{processes: make(map[string]*managedProcess), launch: launch}
}

// ApplyConfig takes a Config and either starts a new managed instance or
// updates an existing managed instance.
func (m *BasicManager) ApplyConfig(c Config) error {
	m.mut.Lock()
	defer m.mut.Unlock()

	// If the config already exists, we need to update it.
	proc, ok := m.processes[c.Name]
	if ok {
		err := proc.inst.Update(c)
		if errors.Is(err, ErrInvalidUpdate) {
			fmt.Println("could not dynamically update instance, will manually restart:", c.Name)
			// NOTE: we don't return here; we fall through to spawn the new instance.
			proc.Stop()
		} else if err != nil {
			return fmt.Errorf("failed to update instance %s: %w", c.Name, err)
		} else {
			proc.cfg = c
			return nil
		}
	}

	// Spawn a new process for the new config.
	return m.spawnProcess(c)
}

func (m *BasicManager) spawnProcess(c Config) error {
	inst, err := m.launch(c)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)

	proc := &managedProcess{cancel: cancel, done: done, cfg: c, inst: inst}
	m.processes[c.Name] = proc

	go func() {
		m.runProcess(ctx, c.Name, inst)

		// Now that the process has stopped, we can remove it from our managed list.
		m.mut.Lock()
		delete(m.processes, c.Name)
		m.mut.Unlock()

		close(done)
	}()
	return nil
}

// runProcess runs an instance until it is explicitly stopped by cancelling the context.
func (m *BasicManager) runProcess(ctx context.Context, name string, inst ManagedInstance) {
	for {
		err := inst.Run(ctx)
		if err != nil && err != context.Canceled {
			fmt.Println("instance stopped abnormally, restarting:", name, err)
			continue
		}
		fmt.Println("stopped instance", name)
		break
	}
}

// DeleteConfig removes a managed instance by its config name.
func (m *BasicManager) DeleteConfig(name string) error {
	m.mut.Lock()
	proc, ok := m.processes[name]
	m.mut.Unlock()
	if !ok {
		return errors.New("config does not exist")
	}
	proc.Stop()
	return nil
}

// instance is a stand-in for the Prometheus instance (WAL, scrape manager, remote write).
type instance struct {
	mut sync.Mutex
	cfg Config
}

func (i *instance) Run(ctx context.Context) error {
	<-ctx.Done()
	return context.Canceled
}

// Update only allows the remote_write section to change at runtime; anything
// else requires the instance to be restarted.
func (i *instance) Update(c Config) error {
	i.mut.Lock()
	defer i.mut.Unlock()
	if c.ScrapeInterval != i.cfg.ScrapeInterval {
		return fmt.Errorf("%w: scrape_interval changed", ErrInvalidUpdate)
	}
	i.cfg = c
	return nil
}

func main() {
	m := NewBasicManager(func(c Config) (ManagedInstance, error) { return &instance{cfg: c}, nil })

	// The config store shards "team-a" to this node...
	if err := m.ApplyConfig(Config{Name: "team-a", ScrapeInterval: time.Minute}); err != nil {
		panic(err)
	}
	// ...and later a new version with a different scrape interval arrives.
	if err := m.ApplyConfig(Config{Name: "team-a", ScrapeInterval: 15 * time.Second}); err != nil {
		panic(err)
	}
	fmt.Println("applied new config version")
	_ = m.DeleteConfig("team-a")
}
