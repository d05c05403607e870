// Fixed twin: the connection service records the connection under its
// mutex and calls model.AddConnection after releasing it.
// Shape of syncthing/syncthing issue #2987 ("lib/connections, lib/model:
// Deadlock on new connection when it tries to set the name"): the
// connection service's handle loop calls model.AddConnection with its own
// mutex held; AddConnection stores the remote's advertised name through
// config.Wrapper.SetDevice, and the wrapper runs every subscribed
// Committer's CommitConfiguration under its lock, including the connection
// service's, which locks the service mutex again.
package main

import (
	"fmt"
	"sync"
)

type DeviceID string

type DeviceConfiguration struct {
	DeviceID  DeviceID
	Name      string
	Addresses []string
}

type Configuration struct {
	Devices []DeviceConfiguration
}

type Committer interface {
	VerifyConfiguration(from, to Configuration) error
	CommitConfiguration(from, to Configuration) bool
}

type Wrapper struct {
	cfg  Configuration
	subs []Committer
	mut  sync.Mutex
}

func (w *Wrapper) Subscribe(c Committer) {
	w.mut.Lock()
	w.subs = append(w.subs, c)
	w.mut.Unlock()
}

func (w *Wrapper) replaceLocked(to Configuration) error {
	from := w.cfg
	for _, sub := range w.subs {
		if err := sub.VerifyConfiguration(from, to); err != nil {
			return err
		}
	}
	w.cfg = to
	for _, sub := range w.subs {
		sub.CommitConfiguration(from, to)
	}
	return nil
}

func (w *Wrapper) Device(id DeviceID) (DeviceConfiguration, bool) {
	w.mut.Lock()
	defer w.mut.Unlock()
	for _, d := range w.cfg.Devices {
		if d.DeviceID == id {
			return d, true
		}
	}
	return DeviceConfiguration{}, false
}

func (w *Wrapper) SetDevice(dev DeviceConfiguration) error {
	w.mut.Lock()
	defer w.mut.Unlock()
	newCfg := Configuration{Devices: append([]DeviceConfiguration(nil), w.cfg.Devices...)}
	for i := range newCfg.Devices {
		if newCfg.Devices[i].DeviceID == dev.DeviceID {
			newCfg.Devices[i] = dev
			return w.replaceLocked(newCfg)
		}
	}
	newCfg.Devices = append(newCfg.Devices, dev)
	return w.replaceLocked(newCfg)
}

// --- protocol ---

type Connection interface {
	ID() DeviceID
	Start()
}

type rawConnection struct {
	id      DeviceID
	started bool
}

func (c *rawConnection) ID() DeviceID { return c.id }
func (c *rawConnection) Start()       { c.started = true }

type HelloResult struct {
	DeviceName    string
	ClientVersion string
}

// --- model ---

type Model struct {
	cfg           *Wrapper
	pmut          sync.RWMutex
	conn          map[DeviceID]Connection
	helloMessages map[DeviceID]HelloResult
}

func (m *Model) VerifyConfiguration(from, to Configuration) error { return nil }
func (m *Model) CommitConfiguration(from, to Configuration) bool  { return true }

func (m *Model) AddConnection(conn Connection, hello HelloResult) {
	deviceID := conn.ID()
	m.pmut.Lock()
	m.conn[deviceID] = conn
	m.helloMessages[deviceID] = hello
	m.pmut.Unlock()

	if device, ok := m.cfg.Device(deviceID); ok && device.Name == "" {
		device.Name = hello.DeviceName
		m.cfg.SetDevice(device)
	}
	conn.Start()
}

// --- connections ---

type connectionHandler interface {
	AddConnection(conn Connection, hello HelloResult)
}

type internalConn struct {
	Connection
	connType string
	hello    HelloResult
}

type Service struct {
	cfg       *Wrapper
	model     connectionHandler
	mut       sync.RWMutex
	connType  map[DeviceID]string
	listeners map[string]bool
}

func (s *Service) VerifyConfiguration(from, to Configuration) error { return nil }

func (s *Service) CommitConfiguration(from, to Configuration) bool {
	s.mut.Lock()
	defer s.mut.Unlock()
	for _, dev := range to.Devices {
		for _, addr := range dev.Addresses {
			s.listeners[addr] = true // start a listener/dialer for it
		}
	}
	return true
}

func (s *Service) handle(conns <-chan internalConn) {
	for c := range conns {
		s.mut.Lock()
		if ct, ok := s.connType[c.ID()]; ok {
			fmt.Println("already connected over", ct)
			s.mut.Unlock()
			continue
		}
		s.connType[c.ID()] = c.connType
		s.mut.Unlock()
		// may change the config, whose committers include s: call unlocked
		s.model.AddConnection(c.Connection, c.hello)
		fmt.Println("connected to", c.ID(), "over", c.connType)
	}
}

func main() {
	w := &Wrapper{cfg: Configuration{Devices: []DeviceConfiguration{{DeviceID: "MFZWI3D", Addresses: []string{"dynamic"}}}}}
	m := &Model{cfg: w, conn: map[DeviceID]Connection{}, helloMessages: map[DeviceID]HelloResult{}}
	s := &Service{cfg: w, model: m, connType: map[DeviceID]string{}, listeners: map[string]bool{}}
	w.Subscribe(m)
	w.Subscribe(s)

	conns := make(chan internalConn, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.handle(conns)
	}()
	conns <- internalConn{&rawConnection{id: "MFZWI3D"}, "tcp-client", HelloResult{DeviceName: "nas", ClientVersion: "v0.13.0"}}
	close(conns)
	wg.Wait()
	d, _ := w.Device("MFZWI3D")
	fmt.Printf("device %s is now named %q\n", d.DeviceID, d.Name)
}
