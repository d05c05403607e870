// Project: rancher/remotedialer (session.go, session_sync.go), the tunnel library of rancher and k3s
// Issue: rancher/rancher#51509 "Session deadlock: startPings() blocked on RLock due to long-held Lock in Close()",
// fixed by rancher/remotedialer#140 "Remove mutex lock for stopPings" (test in remotedialer#143)
//
// Bug: Session.Close takes the session write lock (s.Lock(), line 207) and,
// still holding it, calls stopPings, which cancels the ping goroutine and
// waits for it to exit (s.pingWait.Wait(), line 192). The ping goroutine
// started by startPings periodically runs sendSyncConnections, which reads
// the active connection IDs through activeConnectionIDs -> s.RLock() (line
// 116). If the SyncConnections tick is taken (the goroutine's select picks it
// instead of ctx.Done(), or it already picked it), the goroutine blocks on
// the read lock Close holds, and Close waits for it forever: the tunnel is
// stuck, "kubectl exec/logs" through the k3s agent tunnel fail with 502.
//
// Whether the goroutine picks the sync tick or ctx.Done() after the cancel is
// up to select's random choice when both are ready, so main closes a series
// of sessions whose sync ticker fires continuously; the first one that
// loses the race deadlocks (each does with probability >= 1/2).
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

const (
	PingWaitDuration  = 60 * time.Second
	PingWriteInterval = 5 * time.Second

	BinaryMessage = 2
	PingMessage   = 9
)

var (
	// SyncConnectionsInterval is the time after which the client will send the list of active connection IDs
	SyncConnectionsInterval = 60 * time.Second
	// SyncConnectionsTimeout sets the maximum duration for a SyncConnections operation
	SyncConnectionsTimeout = 60 * time.Second
)

type messageType int64

const (
	Data messageType = iota + 1
	Connect
	Error
	AddClient
	RemoveClient
	Pause
	Resume
	SyncConnections
)

var idCounter int64

func nextid() int64 { return atomic.AddInt64(&idCounter, 1) }

type message struct {
	id          int64
	messageType messageType
	bytes       []byte
}

func (m *message) WriteTo(deadline time.Time, wsConn wsConn) (int, error) {
	err := wsConn.WriteMessage(BinaryMessage, deadline, m.bytes)
	return len(m.bytes), err
}

// wsConn is the websocket connection of the session (a gorilla websocket.Conn
// behind a write mutex in the real code).
type wsConn interface {
	WriteMessage(messageType int, deadline time.Time, data []byte) error
	WriteControl(messageType int, data []byte, deadline time.Time) error
	Close() error
}

type connection struct {
	connID int64
	err    error
}

func (c *connection) tunnelClose(err error) {
	c.err = err
}

type Session struct {
	sync.RWMutex

	nextConnID int64
	clientKey  string
	sessionKey int64
	conn       wsConn
	conns      map[int64]*connection
	pingCancel context.CancelFunc
	pingWait   sync.WaitGroup
	client     bool
}

func NewClientSession(conn wsConn) *Session {
	return &Session{
		clientKey: "client",
		conn:      conn,
		conns:     map[int64]*connection{},
		client:    true,
	}
}

// activeConnectionIDs returns an ordered list of IDs for the currently active connections
func (s *Session) activeConnectionIDs() []int64 {
	s.RLock()
	defer s.RUnlock()

	res := make([]int64, 0, len(s.conns))
	for id := range s.conns {
		res = append(res, id)
	}
	sort.Slice(res, func(i, j int) bool { return res[i] < res[j] })
	return res
}

// encodeConnectionIDs serializes a slice of connection IDs
func encodeConnectionIDs(ids []int64) []byte {
	payload := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		payload = binary.LittleEndian.AppendUint64(payload, uint64(id))
	}
	return payload
}

func newSyncConnectionsMessage(connectionIDs []int64) *message {
	return &message{
		id:          nextid(),
		messageType: SyncConnections,
		bytes:       encodeConnectionIDs(connectionIDs),
	}
}

// sendSyncConnections sends a binary message of type SyncConnections, whose payload is a list of the active connection IDs for this session
func (s *Session) sendSyncConnections() error {
	_, err := s.writeMessage(time.Now().Add(SyncConnectionsTimeout), newSyncConnectionsMessage(s.activeConnectionIDs()))
	return err
}

func (s *Session) startPings(rootCtx context.Context) {
	ctx, cancel := context.WithCancel(rootCtx)
	s.pingCancel = cancel
	s.pingWait.Add(1)

	go func() {
		defer s.pingWait.Done()

		t := time.NewTicker(PingWriteInterval)
		defer t.Stop()

		syncConnections := time.NewTicker(SyncConnectionsInterval)
		defer syncConnections.Stop()

		for {
			select {
			case <-ctx.Done():
				return
			case <-syncConnections.C:
				if err := s.sendSyncConnections(); err != nil {
					fmt.Println("Error syncing connections:", err)
				}
			case <-t.C:
				if err := s.sendPing(); err != nil {
					fmt.Println("Error writing ping:", err)
				}
			}
		}
	}()
}

// sendPing sends a Ping control message to the peer
func (s *Session) sendPing() error {
	return s.conn.WriteControl(PingMessage, []byte(""), time.Now().Add(PingWaitDuration))
}

func (s *Session) stopPings() {
	if s.pingCancel == nil {
		return
	}

	s.pingCancel()
	s.pingWait.Wait()
}

func (s *Session) writeMessage(deadline time.Time, message *message) (int, error) {
	return message.WriteTo(deadline, s.conn)
}

func (s *Session) addConnection(connID int64, conn *connection) {
	s.Lock()
	defer s.Unlock()

	s.conns[connID] = conn
}

func (s *Session) Close() {
	s.Lock()
	defer s.Unlock()

	s.stopPings()

	for _, connection := range s.conns {
		connection.tunnelClose(errors.New("tunnel disconnect"))
	}

	s.conns = map[int64]*connection{}
}

// memConn discards everything written to it (the peer end of the websocket).
type memConn struct {
	written int64
}

func (m *memConn) WriteMessage(messageType int, deadline time.Time, data []byte) error {
	atomic.AddInt64(&m.written, int64(len(data)))
	return nil
}

func (m *memConn) WriteControl(messageType int, data []byte, deadline time.Time) error {
	return nil
}

func (m *memConn) Close() error { return nil }

func main() {
	// The agent syncs its connection list continuously (remotedialer's own
	// tests shorten SyncConnectionsInterval the same way).
	SyncConnectionsInterval = time.Nanosecond

	for i := 0; i < 200; i++ {
		s := NewClientSession(&memConn{})
		s.addConnection(1, &connection{connID: 1})
		s.addConnection(2, &connection{connID: 2})

		// Serve starts the pings on a client session.
		s.startPings(context.Background())
		for atomic.LoadInt64(&s.conn.(*memConn).written) == 0 {
			time.Sleep(time.Millisecond)
		}

		// The tunnel goes away (agent reconnect, server shutdown).
		s.Close()
	}
	fmt.Println("closed 200 sessions")
}
