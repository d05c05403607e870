// Project: coredns/coredns (plugin/reload/setup.go, plugin/reload/reload.go, and the vendored caddy fork github.com/coredns/caddy: caddy.go, sigtrap.go)
// Issue: coredns/coredns#7314 "plugin/reload deadlocks with SIGTERM", fixed by PR #7562 "fix: prevent SIGTERM/reload deadlock"
//
// The reload plugin registers an OnFinalShutdown callback (line 176) that
// sends on the unbuffered r.quit channel to stop its polling goroutine. On
// SIGTERM caddy runs executeShutdownCallbacks, whose sync.Once body calls
// allShutdownCallbacks: it takes the global instancesMu (line 136) and
// runs every instance's callbacks with it held, so the reload callback blocks
// in the send at line 177. At the same time the reload goroutine has seen a
// changed Corefile and is inside Instance.Restart (line 203); after the
// new instance starts it calls Stop on the old one, which needs instancesMu to
// splice the instance out of the list (line 107). The goroutine that
// would receive from r.quit waits for instancesMu, and the holder of
// instancesMu waits for that receive. The fix makes r.quit buffered so the
// final-shutdown send cannot block while instancesMu is held.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- github.com/coredns/caddy ----

var (
	instances   []*Instance
	instancesMu sync.Mutex

	shutdownCallbacksOnce sync.Once
)

// Input is a Corefile.
type Input struct {
	Contents   string
	ServerType string
}

// Body returns the Corefile text.
func (i Input) Body() string { return i.Contents }

// Instance is one running generation of servers.
type Instance struct {
	serverType      string
	caddyfileInput  Input
	servers         []string
	OnShutdown      []func() error
	OnFinalShutdown []func() error
}

// Caddyfile returns the input the instance was started with.
func (i *Instance) Caddyfile() Input { return i.caddyfileInput }

// Controller is handed to plugin setup functions.
type Controller struct {
	instance *Instance
}

// OnFinalShutdown adds a callback run when the process is terminating.
func (c *Controller) OnFinalShutdown(fn func() error) {
	c.instance.OnFinalShutdown = append(c.instance.OnFinalShutdown, fn)
}

func startWithListenerFds(cdyfile Input, inst *Instance) error {
	inst.caddyfileInput = cdyfile
	// executeDirectives: every plugin's setup function runs here.
	if err := setup(&Controller{instance: inst}); err != nil {
		return err
	}

	instancesMu.Lock()
	instances = append(instances, inst)
	instancesMu.Unlock()

	// Servers of the new instance start listening and run their
	// OnStartup callbacks.
	time.Sleep(100 * time.Millisecond)
	inst.servers = append(inst.servers, "dns://.:53")
	return nil
}

// Restart replaces the running instance with one built from newCaddyfile.
func (i *Instance) Restart(newCaddyfile Input) (*Instance, error) {
	newInst := &Instance{serverType: newCaddyfile.ServerType}
	if err := startWithListenerFds(newCaddyfile, newInst); err != nil {
		return i, fmt.Errorf("starting with listener file descriptors: %v", err)
	}

	// success! stop the old instance
	if err := i.Stop(); err != nil {
		return i, err
	}
	for _, shutdownFunc := range i.OnShutdown {
		if err := shutdownFunc(); err != nil {
			return i, err
		}
	}
	return newInst, nil
}

// Stop stops the servers of the instance and removes it from the list.
func (i *Instance) Stop() error {
	i.servers = nil

	// splice i out of instance list, causing it to be garbage-collected
	instancesMu.Lock()
	for j, other := range instances {
		if other == i {
			instances = append(instances[:j], instances[j+1:]...)
			break
		}
	}
	instancesMu.Unlock()
	return nil
}

// ShutdownCallbacks runs the final-shutdown and shutdown callbacks of i.
func (i *Instance) ShutdownCallbacks() []error {
	var errs []error
	for _, shutdownFunc := range i.OnFinalShutdown {
		if err := shutdownFunc(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, shutdownFunc := range i.OnShutdown {
		if err := shutdownFunc(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func allShutdownCallbacks() []error {
	var errs []error
	instancesMu.Lock()
	for _, inst := range instances {
		errs = append(errs, inst.ShutdownCallbacks()...)
	}
	instances = []*Instance{}
	instancesMu.Unlock()
	return errs
}

// executeShutdownCallbacks is what the SIGTERM/SIGINT trap runs.
func executeShutdownCallbacks(signame string) (exitCode int) {
	shutdownCallbacksOnce.Do(func() {
		errs := allShutdownCallbacks()
		if len(errs) > 0 {
			fmt.Printf("[%s] %d shutdown errors: %v\n", signame, len(errs), errors.Join(errs...))
			exitCode = 4
		}
	})
	return
}

// ---- plugin/reload ----

type reload struct {
	dur  time.Duration
	quit chan bool
}

var (
	r        = reload{dur: 10 * time.Millisecond, quit: make(chan bool)}
	shutOnce sync.Once

	corefileOnDisk = Input{Contents: ". { forward . 8.8.8.8 }", ServerType: "dns"}
	diskMu         sync.Mutex
	reloadDone     = make(chan struct{})
)

func setup(c *Controller) error {
	// re-register on finalShutDown as the instance most-likely will be changed
	shutOnce.Do(func() {
		c.OnFinalShutdown(func() error {
			r.quit <- true
			return nil
		})
	})
	return nil
}

func loadCaddyfile() Input {
	diskMu.Lock()
	defer diskMu.Unlock()
	return corefileOnDisk
}

// hook is the InstanceStartupEvent hook: it polls the Corefile.
func hook(instance *Instance) {
	go func() {
		defer close(reloadDone)
		tick := time.NewTicker(r.dur)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				corefile := loadCaddyfile()
				if corefile.Body() == instance.Caddyfile().Body() {
					continue
				}
				if _, err := instance.Restart(corefile); err != nil {
					fmt.Println("[ERROR] Corefile changed but reload failed:", err)
					continue
				}
				// we are done, this hook gets called again with new instance
				return
			case <-r.quit:
				return
			}
		}
	}()
}

func main() {
	inst := &Instance{serverType: "dns"}
	if err := startWithListenerFds(loadCaddyfile(), inst); err != nil {
		panic(err)
	}
	hook(inst)

	// The operator edits the Corefile; the next tick starts a restart.
	diskMu.Lock()
	corefileOnDisk = Input{Contents: ". { forward . 1.1.1.1 }", ServerType: "dns"}
	diskMu.Unlock()

	// SIGTERM arrives while the new instance is still starting.
	time.Sleep(50 * time.Millisecond)
	code := executeShutdownCallbacks("SIGTERM")
	<-reloadDone
	fmt.Println("shutdown complete, exit code", code)
}
