// Project: golang.org/x/crypto (ssh/handshake.go handshakeTransport.writePacket, readOnePacket, enterKeyExchange; ssh/mux.go), July 2015.
// Bug: when a key exchange fails, readOnePacket stores the error in t.writeError under t.mu, and the next writePacket returned that error from inside its critical section without releasing t.mu. Every later write on the connection (the next channel request, a keepalive global request) then blocks forever on t.mu (golang/go#11882, fixed by adding the missing t.mu.Unlock() in the writeError branch).
package main

import (
	"errors"
	"fmt"
	"sync"
)

const (
	msgKexInit       = 20
	msgNewKeys       = 21
	msgGlobalRequest = 80
	msgChannelOpen   = 90
)

type Config struct {
	RekeyThreshold uint64
	KeyExchanges   []string
}

type kexInitMsg struct{ KexAlgos []string }

// keyingTransport is the packet layer under the handshake (transport.go).
type keyingTransport interface {
	readPacket() ([]byte, error)
	writePacket(p []byte) error
	Close() error
}

// memTransport plays a server that offers only a kex algorithm we do not support.
type memTransport struct {
	mu      sync.Mutex
	inbound [][]byte
	closed  bool
}

func (m *memTransport) readPacket() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || len(m.inbound) == 0 {
		return nil, errors.New("ssh: connection closed")
	}
	p := m.inbound[0]
	m.inbound = m.inbound[1:]
	return p, nil
}

func (m *memTransport) writePacket(p []byte) error { return nil }

func (m *memTransport) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

type handshakeTransport struct {
	conn   keyingTransport
	config *Config

	incoming  chan []byte
	readError error

	// Protects the writing side of the connection
	mu              sync.Mutex
	cond            *sync.Cond
	sentInitMsg     *kexInitMsg
	writtenSinceKex uint64
	writeError      error
}

func newClientTransport(conn keyingTransport, config *Config) *handshakeTransport {
	t := &handshakeTransport{conn: conn, config: config, incoming: make(chan []byte, 16)}
	t.cond = sync.NewCond(&t.mu)
	return t
}

func (t *handshakeTransport) readLoop(done chan struct{}) {
	defer close(done)
	for {
		p, err := t.readOnePacket()
		if err != nil {
			t.readError = err
			close(t.incoming)
			break
		}
		t.incoming <- p
	}
}

func (t *handshakeTransport) readOnePacket() ([]byte, error) {
	p, err := t.conn.readPacket()
	if err != nil {
		return nil, err
	}
	if p[0] != msgKexInit {
		return p, nil
	}
	err = t.enterKeyExchange(p)

	t.mu.Lock()
	if err != nil {
		// drop connection
		t.conn.Close()
		t.writeError = err
	}
	t.unblockWaiters()
	t.mu.Unlock()

	if err != nil {
		return nil, err
	}
	return []byte{msgNewKeys}, nil
}

// unblockWaiters unblocks all waiters waiting for a key exchange to complete.
// t.mu must be held when calling this method.
func (t *handshakeTransport) unblockWaiters() {
	t.sentInitMsg = nil
	t.cond.Broadcast()
	t.writtenSinceKex = 0
}

func (t *handshakeTransport) sendKexInit() (*kexInitMsg, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sendKexInitLocked()
}

// sendKexInitLocked sends a key change message. t.mu must be locked.
func (t *handshakeTransport) sendKexInitLocked() (*kexInitMsg, error) {
	if t.sentInitMsg != nil {
		return t.sentInitMsg, nil
	}
	msg := &kexInitMsg{KexAlgos: t.config.KeyExchanges}
	if err := t.conn.writePacket([]byte{msgKexInit}); err != nil {
		return nil, err
	}
	t.sentInitMsg = msg
	return msg, nil
}

func (t *handshakeTransport) enterKeyExchange(otherInitPacket []byte) error {
	myInit, err := t.sendKexInit()
	if err != nil {
		return err
	}
	otherInit := &kexInitMsg{KexAlgos: []string{"diffie-hellman-group-exchange-sha256"}}
	for _, a := range myInit.KexAlgos {
		for _, b := range otherInit.KexAlgos {
			if a == b {
				return nil
			}
		}
	}
	return errors.New("ssh: no common algorithms")
}

func (t *handshakeTransport) writePacket(p []byte) error {
	t.mu.Lock()
	if t.writtenSinceKex > t.config.RekeyThreshold {
		t.sendKexInitLocked()
	}
	for t.sentInitMsg != nil {
		t.cond.Wait()
	}
	if t.writeError != nil {
		return t.writeError
	}
	t.writtenSinceKex += uint64(len(p))
	err := t.conn.writePacket(p)
	t.mu.Unlock()
	return err
}

// mux is the connection multiplexer of mux.go, sending through the handshake layer.
type mux struct{ conn *handshakeTransport }

func (m *mux) openChannel(chanType string) error {
	return m.conn.writePacket(append([]byte{msgChannelOpen}, chanType...))
}

func (m *mux) SendRequest(name string) error {
	return m.conn.writePacket(append([]byte{msgGlobalRequest}, name...))
}

func main() {
	conn := &memTransport{inbound: [][]byte{{msgKexInit}}}
	t := newClientTransport(conn, &Config{RekeyThreshold: 1 << 30, KeyExchanges: []string{"curve25519-sha256@libssh.org"}})
	done := make(chan struct{})
	go t.readLoop(done)
	<-done // the server-initiated key exchange failed

	m := &mux{conn: t}
	fmt.Println("open session:", m.openChannel("session"))
	fmt.Println("keepalive:", m.SendRequest("keepalive@openssh.com"))
}
