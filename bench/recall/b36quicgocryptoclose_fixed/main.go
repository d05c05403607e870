// Project: quic-go/quic-go, formerly lucas-clemente/quic-go v0.12 (internal/handshake/crypto_setup.go: cryptoSetup.Close, RunHandshake, WriteRecord)
// Issue: quic-go/quic-go#2097 "Close/handshake deadlock"
// Fixed twin: Close only marks the setup closed and closes closeChan under h.mutex (line 90);
// it releases the mutex before waiting for handshakeDone (line 99), so the handshake goroutine's
// WriteRecord (line 105) gets the lock, qtls sees the closed message channel and returns.
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
	if h.closed {
		h.mutex.Unlock()
		return nil
	}
	h.closed = true
	close(h.closeChan)
	h.mutex.Unlock()
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
