// Project: quic-go/quic-go, formerly lucas-clemente/quic-go v0.12 (internal/handshake/crypto_setup.go: cryptoSetup.Close, RunHandshake, WriteRecord)
// Issue: quic-go/quic-go#2097 "Close/handshake deadlock"
// cryptoSetup.Close locks h.mutex (line 96), closes closeChan and then waits, still holding the
// mutex, for the qtls handshake goroutine to return (line 104). That goroutine only closes
// handshakeDone once qtls' Conn.Handshake returns, and Handshake writes its flights through
// the record layer callback cryptoSetup.WriteRecord, which locks h.mutex (line 110) to look up the
// current write encryption level. A session closed (for example a dial cancelled through its
// context) while qtls is about to write the ClientHello therefore deadlocks: Close waits for
// the handshake, the handshake waits for Close's mutex, and RunHandshake waits for both.
// main() starts a client handshake and cancels the dial 10ms later, before the ClientHello
// is written.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// EncryptionLevel is protocol.EncryptionLevel.
type EncryptionLevel int

// The encryption levels.
const (
	EncryptionInitial EncryptionLevel = iota
	EncryptionHandshake
)

// qtlsConn models qtls.Conn: Handshake writes records through the RecordLayer callbacks
// and reads handshake messages that quic-go feeds it.
type qtlsConn struct {
	recordLayer interface{ WriteRecord([]byte) (int, error) }
	messages    <-chan []byte
}

func (c *qtlsConn) Handshake() error {
	time.Sleep(50 * time.Millisecond) // generate key shares
	if _, err := c.recordLayer.WriteRecord([]byte("ClientHello")); err != nil {
		return err
	}
	if _, ok := <-c.messages; !ok {
		return errors.New("handshake aborted")
	}
	return nil
}

type cryptoSetup struct {
	conn          *qtlsConn
	messageChan   chan []byte
	handshakeDone chan struct{}
	closeChan     chan struct{}
	initialStream []byte

	mutex         sync.Mutex // protects all members below
	closed        bool
	writeEncLevel EncryptionLevel
}

func newCryptoSetup() *cryptoSetup {
	h := &cryptoSetup{
		messageChan:   make(chan []byte, 100),
		handshakeDone: make(chan struct{}),
		closeChan:     make(chan struct{}),
	}
	h.conn = &qtlsConn{recordLayer: h, messages: h.messageChan}
	return h
}

// RunHandshake runs the TLS handshake until it completes or the session is closed.
func (h *cryptoSetup) RunHandshake() {
	handshakeComplete := make(chan struct{})
	handshakeErrChan := make(chan error, 1)
	go func() {
		defer close(h.handshakeDone)
		if err := h.conn.Handshake(); err != nil {
			handshakeErrChan <- err
			return
		}
		close(handshakeComplete)
	}()

	select {
	case <-handshakeComplete:
	case <-h.closeChan:
		close(h.messageChan)
		// wait until the Handshake() go routine has returned
		<-h.handshakeDone
	case err := <-handshakeErrChan:
		fmt.Println("handshake failed:", err)
	}
}

// Close closes the crypto setup.
func (h *cryptoSetup) Close() error {
	h.mutex.Lock()
	defer h.mutex.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	close(h.closeChan)
	// wait until qtls.Handshake() actually returned
	<-h.handshakeDone
	return nil
}

// WriteRecord is called when TLS writes data.
func (h *cryptoSetup) WriteRecord(p []byte) (int, error) {
	h.mutex.Lock()
	defer h.mutex.Unlock()
	switch h.writeEncLevel {
	case EncryptionInitial:
		// assume that the first WriteRecord call contains the ClientHello
		h.initialStream = append(h.initialStream, p...)
		return len(p), nil
	default:
		return 0, fmt.Errorf("unexpected write encryption level: %d", h.writeEncLevel)
	}
}

func main() {
	h := newCryptoSetup()
	handshakeReturned := make(chan struct{})
	go func() {
		h.RunHandshake()
		close(handshakeReturned)
	}()

	time.Sleep(10 * time.Millisecond) // the dial's context is cancelled
	if err := h.Close(); err != nil {
		fmt.Println("close:", err)
	}
	<-handshakeReturned
	fmt.Println("session closed")
}
