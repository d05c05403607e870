// Project: wireguard-go (device/device.go)
// Bug: Device.Close() locked device.ipcMutex and then device.state, while
// Device.Up() -> changeState() locks device.state and then upLocked() locks
// device.ipcMutex (to wait for a concurrent IPC set before starting peers).
// Closing the device right after bringing it up deadlocks on the two mutexes.
// Fix: Close() acquires device.state first and device.ipcMutex second, the same
// order as changeState()/upLocked().

package b21wgdevice_fixed

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type deviceState uint32

const (
	deviceStateDown deviceState = iota
	deviceStateUp
	deviceStateClosed
)

type NoisePublicKey [32]byte

type Logger struct {
	Verbosef func(format string, args ...any)
	Errorf   func(format string, args ...any)
}

type Peer struct {
	device                      *Device
	running                     atomic.Bool
	persistentKeepaliveInterval atomic.Uint32
}

func (peer *Peer) Start()         { peer.running.Store(true) }
func (peer *Peer) Stop()          { peer.running.Store(false) }
func (peer *Peer) SendKeepalive() {}

type Bind interface {
	Open(port uint16) (uint16, error)
	Close() error
}

type stdNetBind struct{ open bool }

func (b *stdNetBind) Open(port uint16) (uint16, error) {
	time.Sleep(30 * time.Millisecond) // bind UDP sockets
	b.open = true
	return port, nil
}

func (b *stdNetBind) Close() error { b.open = false; return nil }

type Device struct {
	state struct {
		sync.Mutex
		state atomic.Uint32
	}
	net struct {
		sync.RWMutex
		bind   Bind
		port   uint16
		fwmark uint32
	}
	peers struct {
		sync.RWMutex
		keyMap map[NoisePublicKey]*Peer
	}
	ipcMutex sync.RWMutex
	closed   chan struct{}
	log      *Logger
}

func NewDevice(bind Bind, logger *Logger) *Device {
	device := &Device{closed: make(chan struct{}), log: logger}
	device.net.bind = bind
	device.peers.keyMap = make(map[NoisePublicKey]*Peer)
	return device
}

func (device *Device) deviceState() deviceState { return deviceState(device.state.state.Load()) }
func (device *Device) isClosed() bool           { return device.deviceState() == deviceStateClosed }
func (device *Device) isUp() bool               { return device.deviceState() == deviceStateUp }

func (device *Device) BindUpdate() error {
	device.net.Lock()
	defer device.net.Unlock()
	port, err := device.net.bind.Open(device.net.port)
	if err != nil {
		return err
	}
	device.net.port = port
	return nil
}

func (device *Device) upLocked() error {
	if err := device.BindUpdate(); err != nil {
		device.log.Errorf("Unable to update bind: %v", err)
		return err
	}

	// The IPC set operation waits for peers to be created before calling Start() on them,
	// so if there's a concurrent IPC set request happening, we should wait for it to complete.
	device.ipcMutex.Lock()
	defer device.ipcMutex.Unlock()

	device.peers.RLock()
	for _, peer := range device.peers.keyMap {
		peer.Start()
		if peer.persistentKeepaliveInterval.Load() > 0 {
			peer.SendKeepalive()
		}
	}
	device.peers.RUnlock()
	return nil
}

func (device *Device) downLocked() error {
	device.net.Lock()
	err := device.net.bind.Close()
	device.net.Unlock()
	device.peers.RLock()
	for _, peer := range device.peers.keyMap {
		peer.Stop()
	}
	device.peers.RUnlock()
	return err
}

func (device *Device) changeState(want deviceState) (err error) {
	device.state.Lock()
	defer device.state.Unlock()
	old := device.deviceState()
	if old == deviceStateClosed {
		return errors.New("device closed")
	}
	if want == old {
		return nil
	}
	switch want {
	case deviceStateUp:
		device.state.state.Store(uint32(deviceStateUp))
		if err = device.upLocked(); err == nil {
			break
		}
		fallthrough
	case deviceStateDown:
		device.state.state.Store(uint32(deviceStateDown))
		if errDown := device.downLocked(); err == nil {
			err = errDown
		}
	}
	device.log.Verbosef("Interface state was %d, requested %d, now %d", old, want, device.deviceState())
	return
}

func (device *Device) Up() error   { return device.changeState(deviceStateUp) }
func (device *Device) Down() error { return device.changeState(deviceStateDown) }

func (device *Device) Close() {
	device.state.Lock()
	defer device.state.Unlock()
	device.ipcMutex.Lock()
	defer device.ipcMutex.Unlock()
	if device.isClosed() {
		return
	}
	device.state.state.Store(uint32(deviceStateClosed))
	device.log.Verbosef("Device closing")
	device.downLocked()
	device.peers.Lock()
	device.peers.keyMap = make(map[NoisePublicKey]*Peer)
	device.peers.Unlock()
	close(device.closed)
}

func TestCloseRightAfterUp(t *testing.T) {
	nop := func(string, ...any) {}
	device := NewDevice(&stdNetBind{}, &Logger{Verbosef: nop, Errorf: nop})
	device.peers.keyMap[NoisePublicKey{1}] = &Peer{device: device}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = device.Up()
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		device.Close()
	}()
	wg.Wait()
}
