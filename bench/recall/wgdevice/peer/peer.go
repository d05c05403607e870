// Package peer is a cut-down wireguard-go Peer with its receive routines.
package peer

import "sync"

// Device is implemented by device.Device.
type Device interface {
	AllowedIPsFor(key string) []string
}

type Peer struct {
	Key      string
	dev      Device
	inbound  chan []byte
	stop     chan struct{}
	stopping sync.WaitGroup
}

func New(key string, dev Device) *Peer {
	return &Peer{Key: key, dev: dev, inbound: make(chan []byte, 64), stop: make(chan struct{})}
}

// Start fans out n receive routines.
func (p *Peer) Start(n int) {
	for i := 0; i < n; i++ {
		p.stopping.Add(1)
		go func() { defer p.stopping.Done(); p.routineSequentialReceiver() }()
	}
}

func (p *Peer) routineSequentialReceiver() {
	for {
		select {
		case <-p.stop:
			return
		case <-p.inbound: // check inner source against the peer's allowed IPs
			_ = p.dev.AllowedIPsFor(p.Key)
		}
	}
}

func (p *Peer) Deliver(pkt []byte) {
	select {
	case p.inbound <- pkt:
	case <-p.stop:
	}
}

// Stop signals the routines and waits for them to exit.
func (p *Peer) Stop() {
	close(p.stop)
	p.stopping.Wait()
}
