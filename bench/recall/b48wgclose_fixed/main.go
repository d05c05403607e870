// Project: WireGuard/wireguard-go (golang.zx2c4.com/wireguard), 2023 master
// (after "device: wait for and lock ipc operations during close", PR #78).
// Files/functions: device/device.go: Device.Close, Device.changeState,
// Device.upLocked, Device.downLocked, Device.BindUpdate, Device.Up;
// device/tun.go: Device.RoutineTUNEventReader.
// Reference: WireGuard/wireguard-go PR #96 "device: fix possible deadlock in
// close method" (applied upstream as the commit of the same name).
//
// PR #78 made Close take device.ipcMutex for its whole duration and only then
// take device.state. The state machine does the opposite: changeState (reached
// from Up, which RoutineTUNEventReader calls when the TUN reports EventUp)
// takes device.state, and upLocked then takes device.ipcMutex so that it waits
// for a concurrent IPC set operation before starting peers. When Close is
// called very soon after NewDevice, the TUN event reader is inside changeState
// (holding state, busy binding the UDP sockets) while Close grabs ipcMutex and
// blocks on state; upLocked then blocks on ipcMutex. The fix makes Close
// acquire device.state first and device.ipcMutex second, the same order as
// changeState/upLocked.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type deviceState uint32

const (
	deviceStateDown deviceState = iota + 1
	deviceStateUp
	deviceStateClosed
)

type tunEvent int

const tunEventUp tunEvent = 1

type tunDevice struct{ events chan tunEvent }

func (t *tunDevice) Events() <-chan tunEvent { return t.events }
func (t *tunDevice) Close() error            { close(t.events); return nil }

// bind stands in for conn.StdNetBind; opening sockets takes a while.
type bind struct{ port uint16 }

func createBind(port uint16) (*bind, uint16, error) {
	time.Sleep(100 * time.Millisecond) // socket setup, route listener, ...
	return &bind{port: 51820}, 51820, nil
}

type Peer struct{ started bool }

func (p *Peer) Start() { p.started = true }
func (p *Peer) Stop()  { p.started = false }

type Device struct {
	state struct {
		sync.Mutex
		state atomic.Uint32
	}
	net struct {
		sync.RWMutex
		bind *bind
		port uint16
	}
	peers struct {
		sync.RWMutex
		keyMap map[string]*Peer
	}
	tun struct {
		device *tunDevice
	}
	ipcMutex sync.RWMutex
	closed   chan struct{}
}

func (device *Device) deviceState() deviceState { return deviceState(device.state.state.Load()) }
func (device *Device) isUp() bool               { return device.deviceState() == deviceStateUp }

func (device *Device) changeState(want deviceState) error {
	device.state.Lock()
	defer device.state.Unlock()
	old := device.deviceState()
	if old == deviceStateClosed {
		return nil
	}
	switch want {
	case old:
		return nil
	case deviceStateUp:
		device.state.state.Store(uint32(deviceStateUp))
		if err := device.upLocked(); err == nil {
			break
		}
		fallthrough
	case deviceStateDown:
		device.state.state.Store(uint32(deviceStateDown))
		device.downLocked()
	}
	return nil
}

func (device *Device) upLocked() error {
	if err := device.BindUpdate(); err != nil {
		return err
	}
	// The IPC set operation waits for peers to be created before calling
	// Start() on them, so wait for a concurrent IPC set to complete.
	device.ipcMutex.Lock()
	defer device.ipcMutex.Unlock()

	device.peers.RLock()
	for _, peer := range device.peers.keyMap {
		peer.Start()
	}
	device.peers.RUnlock()
	return nil
}

func (device *Device) downLocked() {
	device.BindClose()
	device.peers.RLock()
	for _, peer := range device.peers.keyMap {
		peer.Stop()
	}
	device.peers.RUnlock()
}

func (device *Device) BindUpdate() error {
	device.net.Lock()
	defer device.net.Unlock()
	if !device.isUp() {
		return nil
	}
	var err error
	device.net.bind, device.net.port, err = createBind(device.net.port)
	return err
}

func (device *Device) BindClose() {
	device.net.Lock()
	device.net.bind = nil
	device.net.Unlock()
}

func (device *Device) Up() error { return device.changeState(deviceStateUp) }

func (device *Device) RoutineTUNEventReader() {
	for event := range device.tun.device.Events() {
		if event&tunEventUp != 0 && !device.isUp() {
			device.Up()
		}
	}
}

func (device *Device) Close() {
	device.state.Lock()
	defer device.state.Unlock()
	device.ipcMutex.Lock()
	defer device.ipcMutex.Unlock()
	if device.deviceState() == deviceStateClosed {
		return
	}
	device.state.state.Store(uint32(deviceStateClosed))
	device.tun.device.Close()
	device.downLocked()
	close(device.closed)
}

func NewDevice(tun *tunDevice) *Device {
	device := new(Device)
	device.state.state.Store(uint32(deviceStateDown))
	device.closed = make(chan struct{})
	device.tun.device = tun
	device.peers.keyMap = map[string]*Peer{"peerA": {}}
	go device.RoutineTUNEventReader()
	return device
}

func main() {
	tun := &tunDevice{events: make(chan tunEvent, 1)}
	tun.events <- tunEventUp // the kernel reports the interface up right away
	d := NewDevice(tun)
	time.Sleep(20 * time.Millisecond)
	d.Close() // closed very soon after creation
	fmt.Println("device closed")
}
