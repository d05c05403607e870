// Project: google/gvisor netstack (pkg/tcpip/stack/stack.go RemoveNIC, pkg/tcpip/stack/nic.go remove, pkg/tcpip/link/veth), 2023 (approximate).
// Bug: CreateNICWithOptions installs an on-close action on the link endpoint that calls Stack.RemoveNIC; RemoveNIC holds
// s.mu while nic.remove closes the link endpoint, and closing a veth end runs the close actions of both ends, which call
// RemoveNIC and block on s.mu; the fix clears the action and returns the endpoint Close as a deferred action run after s.mu is released.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type NICID int32

var ErrUnknownNICID = errors.New("unknown nic id")

type NetworkDispatcher interface {
	DeliverNetworkPacket(protocol uint16, pkt []byte)
}

// LinkEndpoint is the subset of stack.LinkEndpoint used here.
type LinkEndpoint interface {
	Attach(dispatcher NetworkDispatcher)
	IsAttached() bool
	Close()
	SetOnCloseAction(func())
}

// ---- pkg/tcpip/link/veth ----

type veth struct {
	mu        sync.RWMutex
	closed    bool
	endpoints [2]*Endpoint
}

type Endpoint struct {
	mu            sync.RWMutex
	veth          *veth
	peer          *Endpoint
	dispatcher    NetworkDispatcher
	onCloseAction func()
}

func NewPair() (*Endpoint, *Endpoint) {
	v := &veth{}
	a, b := &Endpoint{veth: v}, &Endpoint{veth: v}
	a.peer, b.peer = b, a
	v.endpoints = [2]*Endpoint{a, b}
	return a, b
}

func (e *Endpoint) Attach(d NetworkDispatcher) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dispatcher = d
}

func (e *Endpoint) IsAttached() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.dispatcher != nil
}

func (e *Endpoint) SetOnCloseAction(action func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onCloseAction = action
}

// Close closes both ends of the pair and runs their on-close actions.
func (e *Endpoint) Close() {
	e.veth.mu.Lock()
	if e.veth.closed {
		e.veth.mu.Unlock()
		return
	}
	e.veth.closed = true
	e.veth.mu.Unlock()
	for _, ep := range e.veth.endpoints {
		ep.mu.RLock()
		action := ep.onCloseAction
		ep.mu.RUnlock()
		if action != nil {
			action()
		}
	}
}

// ---- pkg/tcpip/stack ----

type nic struct {
	stack               *Stack
	id                  NICID
	name                string
	NetworkLinkEndpoint LinkEndpoint

	enableDisableMu sync.RWMutex
	enabled         bool
}

func (n *nic) DeliverNetworkPacket(protocol uint16, pkt []byte) {}

func (n *nic) disableLocked() { n.enabled = false }

// remove (fixed): closing the link endpoint is returned as a deferred action.
func (n *nic) remove() (func(), error) {
	n.enableDisableMu.Lock()
	n.disableLocked()
	n.enableDisableMu.Unlock()

	// Prevent packets from going down to the link before shutting the link down.
	n.NetworkLinkEndpoint.Attach(nil)
	ep := n.NetworkLinkEndpoint
	ep.SetOnCloseAction(nil)
	// The link endpoint will most likely hold references to the network
	// stack or the NIC, so we have to call Close on it after we release
	// the stack lock. Otherwise, there may be a deadlock if the link
	// endpoint code calls back into the stack.
	return ep.Close, nil
}

type Stack struct {
	mu   sync.RWMutex
	nics map[NICID]*nic

	routeMu    sync.RWMutex
	routeTable []NICID
}

func New() *Stack { return &Stack{nics: map[NICID]*nic{}} }

func (s *Stack) CreateNICWithOptions(id NICID, ep LinkEndpoint, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.nics[id]; ok {
		return errors.New("duplicate nic id")
	}
	n := &nic{stack: s, id: id, name: name, NetworkLinkEndpoint: ep, enabled: true}
	ep.Attach(n)
	ep.SetOnCloseAction(func() {
		s.RemoveNIC(id)
	})
	s.nics[id] = n
	s.routeMu.Lock()
	s.routeTable = append(s.routeTable, id)
	s.routeMu.Unlock()
	return nil
}

// RemoveNIC removes NIC and all related routes from the network stack.
func (s *Stack) RemoveNIC(id NICID) error {
	s.mu.Lock()
	deferAct, err := s.removeNICLocked(id)
	s.mu.Unlock()
	if deferAct != nil {
		deferAct()
	}
	return err
}

func (s *Stack) removeNICLocked(id NICID) (func(), error) {
	nic, ok := s.nics[id]
	if !ok {
		return nil, ErrUnknownNICID
	}
	delete(s.nics, id)

	s.routeMu.Lock()
	kept := s.routeTable[:0]
	for _, r := range s.routeTable {
		if r != id {
			kept = append(kept, r)
		}
	}
	s.routeTable = kept
	s.routeMu.Unlock()

	return nic.remove()
}

func main() {
	s := New()
	// "ip link add veth0 type veth peer name veth1" handled by the sentry's netlink route protocol.
	a, b := NewPair()
	if err := s.CreateNICWithOptions(1, a, "veth0"); err != nil {
		panic(err)
	}
	if err := s.CreateNICWithOptions(2, b, "veth1"); err != nil {
		panic(err)
	}
	// "ip link del veth0"
	if err := s.RemoveNIC(1); err != nil {
		fmt.Println("RemoveNIC:", err)
	}
	s.mu.RLock()
	fmt.Println("nics left:", len(s.nics))
	s.mu.RUnlock()
}
