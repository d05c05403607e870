// Project: moby/moby (plugin/manager.go, plugin/manager_linux.go Manager.Shutdown and StateChanged, daemon/daemon.go pluginShutdown), Docker 1.12 experimental managed plugins, August 2016 (PR #25642 "Fix deadlock on plugin shutdown"; lock shape approximate).
// Bug: Manager.Shutdown read-locks the plugin manager (deferred RUnlock) for the whole loop over the plugins, and after each active plugin has been signalled and has exited it marks the plugin inactive and persists plugins.json under pm.Lock(), so the daemon shutdown goroutine blocks forever on the write lock of the RWMutex it already holds for reading. The fix drops the state update from Shutdown, since after #25553 Active is the desired state and must survive a daemon restart.
package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// ---- engine-api/types ----
type Plugin struct {
	ID     string `json:"Id"`
	Name   string
	Tag    string
	Active bool
}

// ---- libcontainerd ----
type State string

const StateExit State = "exit"

type StateInfo struct {
	State    State
	ExitCode uint32
}

// Backend is implemented by the plugin manager to receive container events.
type Backend interface {
	StateChanged(id string, e StateInfo) error
}

type Client interface {
	Signal(containerID string, sig int) error
}

// fakeRemote plays containerd: a signalled plugin exits and the event loop
// reports StateExit to the backend.
type fakeRemote struct{ backend Backend }

func (r *fakeRemote) Signal(containerID string, sig int) error {
	go func() {
		time.Sleep(10 * time.Millisecond)
		r.backend.StateChanged(containerID, StateInfo{State: StateExit, ExitCode: uint32(128 + sig)})
	}()
	return nil
}

// ---- plugin ----
type plugin struct {
	PluginObj         Plugin `json:"plugin"`
	runtimeSourcePath string
	exitChan          chan bool
}

func (p *plugin) Name() string { return p.PluginObj.Name + ":" + p.PluginObj.Tag }

type pluginMap map[string]*plugin

// Manager controls the plugin subsystem.
type Manager struct {
	sync.RWMutex
	libRoot          string
	plugins          pluginMap
	nameToID         map[string]string
	containerdClient Client
	liveRestore      bool
	shutdown         bool
	savedState       []byte
}

// StateChanged updates plugin internals using from libcontainerd events.
func (pm *Manager) StateChanged(id string, e StateInfo) error {
	switch e.State {
	case StateExit:
		pm.RLock()
		p, idOk := pm.plugins[id]
		pm.RUnlock()
		if !idOk {
			return fmt.Errorf("plugin %q not found", id)
		}
		if pm.shutdown {
			p.exitChan <- true
		}
	}
	return nil
}

// fixme: not safe
func (pm *Manager) save() error {
	jsonData, err := json.Marshal(pm.plugins)
	if err != nil {
		return err
	}
	pm.savedState = jsonData // ioutils.AtomicWriteFile(libRoot/plugins.json)
	return nil
}

// Shutdown stops all plugins and called during daemon shutdown.
func (pm *Manager) Shutdown() {
	pm.RLock()
	defer pm.RUnlock()

	pm.shutdown = true
	for _, p := range pm.plugins {
		if pm.liveRestore && p.PluginObj.Active {
			continue
		}
		if pm.containerdClient != nil && p.PluginObj.Active {
			p.exitChan = make(chan bool)
			if err := pm.containerdClient.Signal(p.PluginObj.ID, int(syscall.SIGTERM)); err != nil {
				fmt.Println("Sending SIGTERM to plugin failed with error:", err)
			} else {
				select {
				case <-p.exitChan:
				case <-time.After(10 * time.Second):
					pm.containerdClient.Signal(p.PluginObj.ID, int(syscall.SIGKILL))
				}
			}
			close(p.exitChan)
			pm.Lock()
			p.PluginObj.Active = false
			if err := pm.save(); err != nil {
				fmt.Println("failed to save plugin state:", err)
			}
			pm.Unlock()
		}
	}
}

// ---- daemon ----
type Daemon struct{ pluginManager *Manager }

func (daemon *Daemon) pluginShutdown() {
	if daemon.pluginManager != nil {
		daemon.pluginManager.Shutdown()
	}
}

func (daemon *Daemon) Shutdown() error {
	// containers are stopped first, then the plugins they may depend on.
	daemon.pluginShutdown()
	return nil
}

func main() {
	pm := &Manager{
		libRoot:  "/var/lib/docker/plugins",
		plugins:  pluginMap{},
		nameToID: map[string]string{},
	}
	pm.containerdClient = &fakeRemote{backend: pm}
	p := &plugin{PluginObj: Plugin{ID: "5d0e8c7f", Name: "vieux/sshfs", Tag: "latest", Active: true}}
	p.runtimeSourcePath = "/run/docker/" + p.PluginObj.ID
	pm.plugins[p.PluginObj.ID] = p
	pm.nameToID[p.Name()] = p.PluginObj.ID

	d := &Daemon{pluginManager: pm}
	d.Shutdown()
	fmt.Println("daemon shut down, plugins.json:", string(pm.savedState))
}
