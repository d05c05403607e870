package guardclause

import (
	"errors"
	"sync"
)

// A function whose every return fails (a dialer whose success is handed
// on elsewhere, a stub that only reports) still has guard clauses: past
// `if err != nil { return nil, err }` it does its work on every path.
// So a lock taken on a branch of its that only fails is taken where it
// fails, as in a function with a success return (incus' network dial
// write-locking the gateway on a 426 answer under the dial closure's
// read lock).

type Response struct{ Status int }

type Gateway struct {
	lock      sync.RWMutex
	triggered bool
	send      func(addr string) (*Response, error)
}

func (g *Gateway) Dial(addr string) error {
	g.lock.RLock()
	defer g.lock.RUnlock()
	return networkDial(addr, g) // want `Lock of Gateway.lock by networkDial \(at alwaysfails.go:\d+, on the path where networkDial fails\) while read-locked since alwaysfails.go:\d+`
}

func networkDial(addr string, g *Gateway) error {
	resp, err := g.send(addr)
	if err != nil {
		return err
	}
	if resp.Status == 426 {
		g.lock.Lock()
		defer g.lock.Unlock()
		g.triggered = true
		return errors.New("upgrade needed")
	}
	return errors.New("dial not supported")
}

// The fixed form reads what it needs under the read lock and dials after
// letting go of it.
func (g *Gateway) DialReleased(addr string) error {
	g.lock.RLock()
	done := g.triggered
	g.lock.RUnlock()
	if done {
		return errors.New("upgrading")
	}
	return networkDial(addr, g)
}
