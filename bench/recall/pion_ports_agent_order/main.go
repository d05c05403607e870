// Project: pion/webrtc, 2018 (ports manager + ICE agent; file paths approximate)
// Bug: the ports manager and the ICE Agent are each guarded by a mutex and call into each
// other. The agent's check loop holds the agent lock and sends a STUN request through the
// manager (manager lock), while a port's read loop holds the manager lock and asks the agent
// whether the remote candidate is valid (agent lock): AB-BA (issues #78, #108).
// Upstream fix: PR #130 "Fix portsManager/IceAgent deadlock": the manager's paths that
// interact with the agent take the manager's lock as a read lock (RLock), so the two
// directions no longer exclude each other. Names and call chain are modelled on the PR
// description, not copied from the 2018 source.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type Candidate struct {
	Addr string
	Port int
}

type stunMessage struct {
	kind string
	to   Candidate
}

// candidateValidator is the agent's view exposed to the network manager.
type candidateValidator interface {
	IsValidRemote(local, remote Candidate) bool
}

type port struct {
	local Candidate
	sent  atomic.Int64 // stands in for the UDP conn write
}

// Manager owns the UDP ports of a PeerConnection.
type Manager struct {
	mu    sync.Mutex
	ports []*port
	agent candidateValidator
}

// SendSTUN writes msg out of the port bound to local.
func (m *Manager) SendSTUN(local Candidate, msg stunMessage) {
	m.mu.Lock() // DEADLOCK HERE: Agent.mu -> Manager.mu while handleInbound holds Manager.mu -> Agent.mu
	defer m.mu.Unlock()
	for _, p := range m.ports {
		if p.local == local {
			p.sent.Add(1)
		}
	}
}

// AddPort binds a new local port (write side of the manager lock).
func (m *Manager) AddPort(local Candidate) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ports = append(m.ports, &port{local: local})
}

// handleInbound is run by each port's read loop for an incoming STUN packet.
func (m *Manager) handleInbound(local, remote Candidate) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.ports {
		if p.local == local {
			return m.agent.IsValidRemote(local, remote)
		}
	}
	return false
}

// Agent runs ICE connectivity checks.
type Agent struct {
	mu               sync.Mutex
	localCandidates  []Candidate
	remoteCandidates []Candidate
	send             func(local Candidate, msg stunMessage) // wired to Manager.SendSTUN
}

func (a *Agent) IsValidRemote(local, remote Candidate) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.remoteCandidates {
		if r == remote {
			return true
		}
	}
	return false
}

// pingAllCandidates is called from the agent's task loop on every tick.
func (a *Agent) pingAllCandidates() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range a.localCandidates {
		for _, r := range a.remoteCandidates {
			time.Sleep(2 * time.Millisecond) // build + sign the binding request
			a.send(l, stunMessage{kind: "binding-request", to: r})
		}
	}
}

func main() {
	local := Candidate{"192.168.1.10", 50000}
	remote := Candidate{"203.0.113.7", 40000}
	agent := &Agent{localCandidates: []Candidate{local}, remoteCandidates: []Candidate{remote}}
	m := &Manager{agent: agent}
	m.AddPort(local)
	agent.send = m.SendSTUN

	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); agent.pingAllCandidates() }()
		go func() {
			defer wg.Done()
			time.Sleep(time.Millisecond) // a STUN packet arrives on the port
			fmt.Println("inbound valid:", m.handleInbound(local, remote))
		}()
		wg.Wait()
	}()
	select {
	case <-done:
		fmt.Println("checks done")
	case <-time.After(time.Second):
		fmt.Println("hung: agent and ports manager deadlocked")
	}
}
