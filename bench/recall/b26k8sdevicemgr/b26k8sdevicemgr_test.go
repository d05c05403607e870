// Project: kubernetes (kubelet, pkg/kubelet/cm/devicemanager)
// Bug: ManagerImpl.addEndpoint stops the previously registered endpoint of a
// re-registering device plugin while holding m.mutex; endpointImpl.stop reports
// the plugin's devices as deleted through the monitor callback, and
// genericDeviceUpdateCallback takes m.mutex again.
// Fix: detach the old endpoint under m.mutex and stop it after unlocking.
package b26k8sdevicemgr

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

type Device struct {
	ID     string
	Health string
}

const (
	Healthy   = "Healthy"
	Unhealthy = "Unhealthy"
)

type RegisterRequest struct {
	Version      string
	Endpoint     string
	ResourceName string
}

type monitorCallback func(resourceName string, added, updated, deleted []Device)

type endpoint interface {
	run()
	stop()
	getDevices() []Device
}

type endpointImpl struct {
	mutex        sync.Mutex
	socketPath   string
	resourceName string
	devices      map[string]Device
	stopped      bool
	cb           monitorCallback
}

func newEndpointImpl(socketPath, resourceName string, devices map[string]Device, callback monitorCallback) *endpointImpl {
	return &endpointImpl{socketPath: socketPath, resourceName: resourceName, devices: devices, cb: callback}
}

func (e *endpointImpl) run() {
	e.mutex.Lock()
	var added []Device
	for _, d := range e.devices {
		added = append(added, d)
	}
	e.mutex.Unlock()
	e.cb(e.resourceName, added, nil, nil)
}

func (e *endpointImpl) getDevices() []Device {
	e.mutex.Lock()
	defer e.mutex.Unlock()
	var devs []Device
	for _, d := range e.devices {
		devs = append(devs, d)
	}
	return devs
}

func (e *endpointImpl) stop() {
	e.mutex.Lock()
	if e.stopped {
		e.mutex.Unlock()
		return
	}
	e.stopped = true
	var deleted []Device
	for _, d := range e.devices {
		deleted = append(deleted, d)
	}
	e.mutex.Unlock()
	e.cb(e.resourceName, nil, nil, deleted)
}

type ManagerImpl struct {
	socketdir        string
	mutex            sync.Mutex
	endpoints        map[string]endpoint
	healthyDevices   map[string]map[string]bool
	unhealthyDevices map[string]map[string]bool
	allocatedDevices map[string]map[string]bool
	callback         monitorCallback
}

func NewManagerImpl(socketdir string) *ManagerImpl {
	m := &ManagerImpl{
		socketdir:        socketdir,
		endpoints:        make(map[string]endpoint),
		healthyDevices:   make(map[string]map[string]bool),
		unhealthyDevices: make(map[string]map[string]bool),
		allocatedDevices: make(map[string]map[string]bool),
	}
	m.callback = m.genericDeviceUpdateCallback
	return m
}

func (m *ManagerImpl) genericDeviceUpdateCallback(resourceName string, added, updated, deleted []Device) {
	kept := append(updated, added...)
	m.mutex.Lock()
	if _, ok := m.healthyDevices[resourceName]; !ok {
		m.healthyDevices[resourceName] = make(map[string]bool)
	}
	if _, ok := m.unhealthyDevices[resourceName]; !ok {
		m.unhealthyDevices[resourceName] = make(map[string]bool)
	}
	for _, dev := range kept {
		if dev.Health == Healthy {
			m.healthyDevices[resourceName][dev.ID] = true
			delete(m.unhealthyDevices[resourceName], dev.ID)
		} else {
			m.unhealthyDevices[resourceName][dev.ID] = true
			delete(m.healthyDevices[resourceName], dev.ID)
		}
	}
	for _, dev := range deleted {
		delete(m.healthyDevices[resourceName], dev.ID)
		delete(m.unhealthyDevices[resourceName], dev.ID)
	}
	m.mutex.Unlock()
}

func (m *ManagerImpl) addEndpoint(r *RegisterRequest, devices map[string]Device) {
	socketPath := filepath.Join(m.socketdir, r.Endpoint)
	e := newEndpointImpl(socketPath, r.ResourceName, devices, m.callback)

	m.mutex.Lock()
	if old, ok := m.endpoints[r.ResourceName]; ok && old != nil {
		old.stop()
	}
	m.endpoints[r.ResourceName] = e
	m.mutex.Unlock()

	e.run()
}

func (m *ManagerImpl) Register(r *RegisterRequest, devices map[string]Device) error {
	if r.Version != "v1beta1" {
		return fmt.Errorf("unsupported device plugin version %q", r.Version)
	}
	m.addEndpoint(r, devices)
	return nil
}

func (m *ManagerImpl) healthyCount(resourceName string) int {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	return len(m.healthyDevices[resourceName])
}

func TestProbe(t *testing.T) {
	m := NewManagerImpl("/var/lib/kubelet/device-plugins")
	req := &RegisterRequest{Version: "v1beta1", Endpoint: "nvidia.sock", ResourceName: "nvidia.com/gpu"}
	devs := map[string]Device{
		"gpu0": {ID: "gpu0", Health: Healthy},
		"gpu1": {ID: "gpu1", Health: Healthy},
	}
	if err := m.Register(req, devs); err != nil {
		t.Fatal(err)
	}
	if n := m.healthyCount("nvidia.com/gpu"); n != 2 {
		t.Fatalf("expected 2 healthy devices, got %d", n)
	}

	// Plugin restarts and re-registers with one device now unhealthy.
	devs2 := map[string]Device{
		"gpu0": {ID: "gpu0", Health: Healthy},
		"gpu1": {ID: "gpu1", Health: Unhealthy},
	}
	if err := m.Register(req, devs2); err != nil {
		t.Fatal(err)
	}
	if n := m.healthyCount("nvidia.com/gpu"); n != 1 {
		t.Fatalf("expected 1 healthy device, got %d", n)
	}
}
