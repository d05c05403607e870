// Project: pion/webrtc (with pion/ice)
// Bug: ice.Agent called the OnConnectionStateChange handler synchronously while
//      holding the agent mutex. webrtc's ICETransport forwards the new state to
//      PeerConnection.onICEConnectionStateChange, which takes PeerConnection.mu.
//      PeerConnection.Close holds pc.mu and stops the ICE transport, which calls
//      Agent.Close and needs the agent mutex: agent.mu -> pc.mu vs pc.mu -> agent.mu.
// Fix: the agent queues state changes on a channel drained by a dedicated goroutine
//      (startOnConnectionStateChangeRoutine), so handlers never run under agent.mu.

package pionice_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type ConnectionState int

const (
	ConnectionStateNew ConnectionState = iota + 1
	ConnectionStateChecking
	ConnectionStateDisconnected
	ConnectionStateClosed
)

var connectionStateNames = [...]string{"unknown", "new", "checking", "disconnected", "closed"}

func (c ConnectionState) String() string {
	if c < 0 || int(c) >= len(connectionStateNames) {
		return "unknown"
	}
	return connectionStateNames[c]
}

var ErrClosed = errors.New("the agent is closed")

type LeveledLogger interface {
	Debugf(format string, args ...interface{})
	Infof(format string, args ...interface{})
}

type Agent struct {
	mu                          sync.Mutex
	connectionState             ConnectionState
	onConnectionStateChangeHdlr func(ConnectionState)
	closed                      bool
	log                         LeveledLogger
	chanState                   chan ConnectionState
}

func NewAgent(log LeveledLogger) *Agent {
	a := &Agent{connectionState: ConnectionStateNew, log: log, chanState: make(chan ConnectionState, 16)}
	a.startOnConnectionStateChangeRoutine()
	return a
}

// startOnConnectionStateChangeRoutine runs handlers without a.mu held.
func (a *Agent) startOnConnectionStateChangeRoutine() {
	go func() {
		for s := range a.chanState {
			a.mu.Lock()
			hdlr := a.onConnectionStateChangeHdlr
			a.mu.Unlock()
			if hdlr != nil {
				hdlr(s)
			}
		}
	}()
}

// OnConnectionStateChange sets a handler that is fired when the connection state changes.
func (a *Agent) OnConnectionStateChange(f func(ConnectionState)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.onConnectionStateChangeHdlr = f
}

// updateConnectionState must be called with a.mu held.
func (a *Agent) updateConnectionState(newState ConnectionState) {
	if a.connectionState == newState {
		return
	}
	a.log.Infof("Setting new connection state: %s", newState)
	a.connectionState = newState
	a.chanState <- newState
}

// validateSelectedPair runs from the connectivity-check ticker.
func (a *Agent) validateSelectedPair(disconnectedTimeout time.Duration, lastReceived time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed && time.Since(lastReceived) > disconnectedTimeout {
		a.updateConnectionState(ConnectionStateDisconnected)
	}
}

func (a *Agent) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return ErrClosed
	}
	a.closed = true
	close(a.chanState)
	return nil
}

type ICETransport struct {
	lock                           sync.RWMutex
	agent                          *Agent
	onConnectionStateChangeHandler func(ConnectionState) // set at construction
}

func (t *ICETransport) Start(agent *Agent) {
	t.lock.Lock()
	t.agent = agent
	t.lock.Unlock()
	agent.OnConnectionStateChange(func(s ConnectionState) {
		if hdlr := t.onConnectionStateChangeHandler; hdlr != nil {
			hdlr(s)
		}
	})
}

func (t *ICETransport) Stop() error {
	t.lock.RLock()
	agent := t.agent
	t.lock.RUnlock()
	if agent == nil {
		return nil
	}
	return agent.Close()
}

type PeerConnection struct {
	mu                 sync.Mutex
	isClosed           bool
	iceConnectionState ConnectionState
	iceTransport       *ICETransport
	log                LeveledLogger
}

func NewPeerConnection(log LeveledLogger) *PeerConnection {
	pc := &PeerConnection{iceConnectionState: ConnectionStateNew, log: log}
	pc.iceTransport = &ICETransport{onConnectionStateChangeHandler: pc.onICEConnectionStateChange}
	return pc
}

func (pc *PeerConnection) onICEConnectionStateChange(s ConnectionState) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.isClosed {
		return
	}
	pc.iceConnectionState = s
}

func (pc *PeerConnection) Close() error {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.isClosed {
		return nil
	}
	pc.isClosed = true
	pc.log.Debugf("closing PeerConnection in ICE state %s", pc.iceConnectionState)
	if err := pc.iceTransport.Stop(); err != nil && !errors.Is(err, ErrClosed) {
		return err
	}
	pc.iceConnectionState = ConnectionStateClosed
	return nil
}

type slowLogger struct{ delay time.Duration }

func (l slowLogger) Debugf(string, ...interface{}) { time.Sleep(l.delay) }
func (l slowLogger) Infof(string, ...interface{})  { time.Sleep(l.delay) }

func TestDisconnectDuringPeerConnectionClose(t *testing.T) {
	log := slowLogger{delay: 50 * time.Millisecond}
	pc := NewPeerConnection(log)
	agent := NewAgent(log)
	pc.iceTransport.Start(agent)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // connectivity checker notices consent expiry
		defer wg.Done()
		agent.validateSelectedPair(time.Millisecond, time.Now().Add(-time.Second))
	}()
	go func() { // application closes the PeerConnection
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		if err := pc.Close(); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
}
