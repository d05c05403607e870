// Project: pion/webrtc
// Bug: PeerConnection invoked the user's OnICEConnectionStateChange handler
//
//	(stored through the OnICEConnectionStateChange setter) while still
//	holding pc.mu. The common "close on failure" handler calls pc.Close(),
//	which locks pc.mu again -> the ICE agent goroutine self-deadlocks.
//
// Fix: copy the handler out under the lock, release pc.mu, then invoke it.
package main

import (
	"fmt"
	"log"
	"sync"
	"time"
)

type ICEConnectionState int

const (
	ICEConnectionStateNew ICEConnectionState = iota + 1
	ICEConnectionStateChecking
	ICEConnectionStateConnected
	ICEConnectionStateFailed
	ICEConnectionStateClosed
)

func (s ICEConnectionState) String() string {
	switch s {
	case ICEConnectionStateNew:
		return "new"
	case ICEConnectionStateChecking:
		return "checking"
	case ICEConnectionStateConnected:
		return "connected"
	case ICEConnectionStateFailed:
		return "failed"
	case ICEConnectionStateClosed:
		return "closed"
	}
	return fmt.Sprintf("unknown(%d)", int(s))
}

// iceAgent runs connectivity checks and reports state transitions.
type iceAgent struct {
	candidates    []string
	onStateChange func(ICEConnectionState)
}

func (a *iceAgent) connectivityChecks(done chan<- struct{}) {
	defer close(done)
	a.onStateChange(ICEConnectionStateChecking)
	for _, c := range a.candidates {
		_ = c // STUN binding request would go here; all of them time out
		time.Sleep(5 * time.Millisecond)
	}
	a.onStateChange(ICEConnectionStateFailed)
}

type PeerConnection struct {
	mu sync.RWMutex

	iceConnectionState                ICEConnectionState
	onICEConnectionStateChangeHandler func(ICEConnectionState)

	isClosed     bool
	transceivers []string
	agent        *iceAgent
}

func NewPeerConnection() *PeerConnection {
	pc := &PeerConnection{
		iceConnectionState: ICEConnectionStateNew,
		transceivers:       []string{"audio", "video"},
	}
	pc.agent = &iceAgent{
		candidates:    []string{"host 10.0.0.2:5000", "srflx 203.0.113.9:61000"},
		onStateChange: pc.onICEConnectionStateChange,
	}
	return pc
}

// OnICEConnectionStateChange sets a handler that is fired when the ICE
// connection state changes.
func (pc *PeerConnection) OnICEConnectionStateChange(f func(ICEConnectionState)) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.onICEConnectionStateChangeHandler = f
}

func (pc *PeerConnection) ICEConnectionState() ICEConnectionState {
	pc.mu.RLock()
	defer pc.mu.RUnlock()
	return pc.iceConnectionState
}

func (pc *PeerConnection) onICEConnectionStateChange(cs ICEConnectionState) {
	pc.mu.Lock()
	defer pc.mu.Unlock()

	pc.iceConnectionState = cs
	log.Printf("ICE connection state changed: %s", cs)
	if handler := pc.onICEConnectionStateChangeHandler; handler != nil {
		handler(cs) // BUG: user code runs with pc.mu held
	}
}

// Close ends the PeerConnection.
func (pc *PeerConnection) Close() error {
	pc.mu.Lock() // deadlock: already held by onICEConnectionStateChange
	defer pc.mu.Unlock()
	if pc.isClosed {
		return nil
	}
	pc.isClosed = true
	pc.iceConnectionState = ICEConnectionStateClosed
	pc.transceivers = nil
	return nil
}

func main() {
	pc := NewPeerConnection()
	pc.OnICEConnectionStateChange(func(s ICEConnectionState) {
		if s == ICEConnectionStateFailed {
			if err := pc.Close(); err != nil {
				log.Printf("close: %v", err)
			}
		}
	})

	done := make(chan struct{})
	go pc.agent.connectivityChecks(done)
	<-done
	fmt.Println("final state:", pc.ICEConnectionState())
}
