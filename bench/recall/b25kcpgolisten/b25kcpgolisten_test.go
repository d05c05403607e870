// Project: xtaci/kcp-go
// Bug: Listener.packetInput kept l.sessionLock held while feeding the datagram into UDPSession.kcpInput (takes s.mu), while UDPSession.Close held s.mu and called l.closeSession (takes l.sessionLock): AB-BA between the listener and session locks.
// Fix: packetInput only looks the session up under sessionLock and releases it before kcpInput; Close drops s.mu before notifying the listener.
package b25kcpgolisten

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

var errClosed = errors.New("io: read/write on closed pipe")

type udpAddr string

func (a udpAddr) Network() string { return "udp" }
func (a udpAddr) String() string  { return string(a) }

type packet struct {
	data []byte
	from net.Addr
}

type kcp struct {
	conv     uint32
	rcvQueue [][]byte
	ackList  []uint32
}

func newKCP(conv uint32) *kcp { return &kcp{conv: conv} }

func (k *kcp) Input(data []byte) int {
	k.rcvQueue = append(k.rcvQueue, append([]byte(nil), data...))
	k.ackList = append(k.ackList, uint32(len(k.rcvQueue)))
	return 0
}

func (k *kcp) flush() {
	k.ackList = k.ackList[:0]
	time.Sleep(30 * time.Millisecond)
}

type UDPSession struct {
	mu          sync.Mutex
	kcp         *kcp
	l           *Listener
	remote      net.Addr
	die         chan struct{}
	dieOnce     sync.Once
	isClosed    bool
	chReadEvent chan struct{}
	rxBytes     uint64
}

func newUDPSession(conv uint32, l *Listener, remote net.Addr) *UDPSession {
	return &UDPSession{
		kcp:         newKCP(conv),
		l:           l,
		remote:      remote,
		die:         make(chan struct{}),
		chReadEvent: make(chan struct{}, 1),
	}
}

func (s *UDPSession) RemoteAddr() net.Addr { return s.remote }

func (s *UDPSession) notifyReadEvent() {
	select {
	case s.chReadEvent <- struct{}{}:
	default:
	}
}

func (s *UDPSession) kcpInput(data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isClosed {
		return
	}
	s.rxBytes += uint64(len(data))
	s.kcp.Input(data)
	s.notifyReadEvent()
}

func (s *UDPSession) Close() error {
	var once bool
	s.dieOnce.Do(func() {
		close(s.die)
		once = true
	})
	if !once {
		return errClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.isClosed = true
	s.kcp.flush()
	if s.l != nil {
		s.l.closeSession(s.remote)
	}
	return nil
}

type Listener struct {
	conn        chan packet
	sessions    map[string]*UDPSession
	sessionLock sync.RWMutex
	chAccepts   chan *UDPSession
	die         chan struct{}
	dieOnce     sync.Once
	rxPackets   uint64
}

func ServeConn(conn chan packet) *Listener {
	l := &Listener{
		conn:      conn,
		sessions:  make(map[string]*UDPSession),
		chAccepts: make(chan *UDPSession, 128),
		die:       make(chan struct{}),
	}
	go l.monitor()
	return l
}

func (l *Listener) monitor() {
	for {
		select {
		case p := <-l.conn:
			l.rxPackets++
			l.packetInput(p.data, p.from)
		case <-l.die:
			return
		}
	}
}

func (l *Listener) packetInput(data []byte, addr net.Addr) {
	l.sessionLock.Lock()
	defer l.sessionLock.Unlock()
	s, ok := l.sessions[addr.String()]
	if !ok {
		s = newUDPSession(uint32(len(l.sessions)+1), l, addr)
		l.sessions[addr.String()] = s
		s.kcp.Input(data)
		l.chAccepts <- s
		return
	}
	s.kcpInput(data)
}

func (l *Listener) closeSession(remote net.Addr) bool {
	l.sessionLock.Lock()
	defer l.sessionLock.Unlock()
	if _, ok := l.sessions[remote.String()]; ok {
		delete(l.sessions, remote.String())
		return true
	}
	return false
}

func (l *Listener) AcceptKCP() (*UDPSession, error) {
	select {
	case s := <-l.chAccepts:
		return s, nil
	case <-l.die:
		return nil, errClosed
	}
}

func (l *Listener) Close() error {
	l.dieOnce.Do(func() { close(l.die) })
	return nil
}

func TestProbe(t *testing.T) {
	conn := make(chan packet)
	l := ServeConn(conn)
	defer l.Close()
	peer := udpAddr("10.0.0.7:40001")

	conn <- packet{data: []byte("syn"), from: peer}
	s, err := l.AcceptKCP()
	if err != nil {
		t.Fatal(err)
	}

	closed := make(chan error)
	go func() { closed <- s.Close() }()
	time.Sleep(10 * time.Millisecond)
	conn <- packet{data: []byte("late-ack"), from: peer}

	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if l.closeSession(s.RemoteAddr()) {
		t.Fatal("session still registered after Close")
	}
}
