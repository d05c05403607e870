// Project: syncthing/syncthing (lib/nat/structs.go, lib/nat/service.go, lib/connections/tcp_listen.go), v0.14.4x, March 2018 (PR #4829, approximate).
// Bug: Mapping.clearAddresses, called from Service.RemoveMapping when a listener stops, holds the mapping's write lock while calling m.notify, and notify read-locks the same RWMutex to walk the subscribers, so the listener's Serve goroutine deadlocks on its own lock.
package main

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// ---- lib/nat/structs.go ----

type Protocol string

const TCP Protocol = "TCP"

type Address struct {
	IP   net.IP
	Port int
}

func (a Address) Equal(b Address) bool { return a.Port == b.Port && a.IP.Equal(b.IP) }

func (a Address) String() string { return net.JoinHostPort(a.IP.String(), fmt.Sprint(a.Port)) }

type MappingChangeSubscriber func(*Mapping, []Address, []Address)

type Mapping struct {
	protocol Protocol
	address  Address

	extAddresses map[string]Address // NAT ID -> Address
	expires      time.Time
	subscribers  []MappingChangeSubscriber
	mut          sync.RWMutex
}

func (m *Mapping) setAddress(id string, address Address) {
	m.mut.Lock()
	if existing, ok := m.extAddresses[id]; !ok || !existing.Equal(address) {
		fmt.Printf("New NAT port mapping: external %s address %s to local address %s.\n", m.protocol, address, m.address)
		m.extAddresses[id] = address
	}
	m.mut.Unlock()
}

func (m *Mapping) clearAddresses() {
	m.mut.Lock()
	var removed []Address
	for id, addr := range m.extAddresses {
		removed = append(removed, addr)
		delete(m.extAddresses, id)
	}
	m.expires = time.Time{}
	if len(removed) > 0 {
		m.notify(nil, removed)
	}
	m.mut.Unlock()
}

func (m *Mapping) notify(added, removed []Address) {
	m.mut.RLock()
	for _, subscriber := range m.subscribers {
		subscriber(m, added, removed)
	}
	m.mut.RUnlock()
}

func (m *Mapping) ExternalAddresses() []Address {
	m.mut.RLock()
	addrs := make([]Address, 0, len(m.extAddresses))
	for _, addr := range m.extAddresses {
		addrs = append(addrs, addr)
	}
	m.mut.RUnlock()
	return addrs
}

func (m *Mapping) OnChanged(subscribed MappingChangeSubscriber) {
	m.mut.Lock()
	m.subscribers = append(m.subscribers, subscribed)
	m.mut.Unlock()
}

// ---- lib/nat/service.go ----

type Service struct {
	id       string
	mappings []*Mapping
	mut      sync.RWMutex
}

func (s *Service) NewMapping(protocol Protocol, ip net.IP, port int) *Mapping {
	mapping := &Mapping{protocol: protocol, address: Address{IP: ip, Port: port}, extAddresses: make(map[string]Address)}
	s.mut.Lock()
	s.mappings = append(s.mappings, mapping)
	s.mut.Unlock()
	return mapping
}

// RemoveMapping does not actually remove the mapping from the IGD, it just
// internally removes it which stops renewing the mapping. Also, it clears any
// existing mapped addresses from the mapping, which as a result should cause
// discovery to reannounce the new addresses.
func (s *Service) RemoveMapping(mapping *Mapping) {
	s.mut.Lock()
	defer s.mut.Unlock()
	for i, existing := range s.mappings {
		if existing == mapping {
			mapping.clearAddresses()
			last := len(s.mappings) - 1
			s.mappings[i] = s.mappings[last]
			s.mappings[last] = nil
			s.mappings = s.mappings[:last]
			return
		}
	}
}

// process renews mappings on the discovered IGDs (reduced to one UPnP device).
func (s *Service) process() {
	s.mut.RLock()
	mappings := make([]*Mapping, len(s.mappings))
	copy(mappings, s.mappings)
	s.mut.RUnlock()
	for _, mapping := range mappings {
		ext := Address{IP: net.ParseIP("203.0.113.7"), Port: 22000 + len(mapping.protocol)}
		mapping.setAddress("upnp/igd-1", ext)
		mapping.notify([]Address{ext}, nil)
	}
}

// ---- lib/connections/tcp_listen.go ----

type tcpListener struct {
	natService *Service
	mapping    *Mapping
	stop       chan struct{}
	mut        sync.RWMutex

	notifyAddressesChanged func(l *tcpListener)
}

func (t *tcpListener) Serve(ready chan<- struct{}) {
	tcaddr := &net.TCPAddr{IP: net.IPv4zero, Port: 22000}
	mapping := t.natService.NewMapping(TCP, tcaddr.IP, tcaddr.Port)
	mapping.OnChanged(func(_ *Mapping, _, _ []Address) {
		t.notifyAddressesChanged(t)
	})
	defer t.natService.RemoveMapping(mapping)

	t.mut.Lock()
	t.mapping = mapping
	t.mut.Unlock()
	close(ready)

	<-t.stop // accept loop until the listener is stopped
}

func (t *tcpListener) WANAddresses() []Address {
	t.mut.RLock()
	defer t.mut.RUnlock()
	if t.mapping == nil {
		return nil
	}
	return t.mapping.ExternalAddresses()
}

func main() {
	natSvc := &Service{id: "nat"}
	t := &tcpListener{natService: natSvc, stop: make(chan struct{})}
	t.notifyAddressesChanged = func(l *tcpListener) {
		fmt.Println("addresses changed, announcing")
	}
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		t.Serve(ready)
		close(done)
	}()
	<-ready
	natSvc.process()
	fmt.Println("WAN addresses:", t.WANAddresses())

	close(t.stop) // listener address changed in the config: stop this listener
	<-done
	fmt.Println("listener stopped")
}
