// Style: like grpc-go addrConn.resetTransport. connectLocked must be called
// with ac.mu held; it drops the lock around the blocking dial, re-acquires it
// and re-checks state before returning, still holding the lock.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type state int

const (
	idle state = iota
	connecting
	ready
	shutdown
)

type addrConn struct {
	mu    sync.Mutex
	addr  string
	state state
	conn  string
	dials int
}

func dial(addr string) (string, error) {
	time.Sleep(5 * time.Millisecond) // network round trip
	if addr == "" {
		return "", errors.New("empty address")
	}
	return "conn:" + addr, nil
}

// connectLocked must be called with ac.mu held. It returns with ac.mu held.
func (ac *addrConn) connectLocked() error {
	if ac.state != idle {
		return nil
	}
	ac.state = connecting
	addr := ac.addr
	ac.mu.Unlock()
	c, err := dial(addr)
	ac.mu.Lock()
	ac.dials++
	if ac.state == shutdown {
		return errors.New("closed while connecting")
	}
	if err != nil {
		ac.state = idle
		return err
	}
	ac.conn, ac.state = c, ready
	return nil
}

func (ac *addrConn) Connect() error {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	return ac.connectLocked()
}

func (ac *addrConn) Close() {
	ac.mu.Lock()
	ac.state = shutdown
	ac.conn = ""
	ac.mu.Unlock()
}

func main() {
	ac := &addrConn{addr: "10.0.0.1:443"}
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ac.Connect(); err != nil {
				fmt.Println("connect:", err)
			}
		}()
	}
	wg.Wait()
	ac.mu.Lock()
	fmt.Println("state:", ac.state, "conn:", ac.conn, "dials:", ac.dials)
	ac.mu.Unlock()
	ac.Close()
}
