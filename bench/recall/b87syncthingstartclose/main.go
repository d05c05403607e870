// Project: syncthing/syncthing (lib/protocol/protocol.go rawConnection.Start/Close/internalClose, lib/model/model.go model.promoteConnections/Closed), v1.29/v1.30, May 2025.
// Bug: rawConnection.internalClose holds c.startStopMut (added by PR #9103 so that start and close are exclusive) while it calls back into the model with c.model.Closed, which takes the model's mut. The model promotes a connection by calling conn.Start while holding m.mut, and Start takes startStopMut, so a connection that is closed (connection switching, or by the remote side) while it is being promoted deadlocks the model and the connection AB-BA (PR #10140 "avoid deadlock with concurrent connection start and close": call model.Closed after startStopMut is released).
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type DeviceID string

// Model is what lib/model implements for lib/protocol.
type Model interface {
	Closed(conn Connection, err error)
}

type Connection interface {
	Start()
	Close(err error)
	DeviceID() DeviceID
	ConnectionID() string
	StartedAt() time.Time
}

// rawModel is the Model without the Connection parameter.
type rawModel interface {
	Closed(err error)
}

// connectionWrappingModel adapts Model to rawModel.
type connectionWrappingModel struct {
	conn  Connection
	model Model
}

func (c *connectionWrappingModel) Closed(err error) { c.model.Closed(c.conn, err) }

// slowCloser is the underlying TLS connection; Close writes a close alert.
type slowCloser struct{}

func (slowCloser) Close() error { time.Sleep(100 * time.Millisecond); return nil }

var CloseTimeout = 10 * time.Millisecond

type rawConnection struct {
	deviceID      DeviceID
	connID        string
	model         rawModel
	closer        interface{ Close() error }
	closeBox      chan string
	closed        chan struct{}
	closeOnce     sync.Once
	sendCloseOnce sync.Once
	startStopMut  sync.Mutex // start and stop must be serialized
	startTime     time.Time
}

func (c *rawConnection) DeviceID() DeviceID   { return c.deviceID }
func (c *rawConnection) ConnectionID() string { return c.connID }
func (c *rawConnection) StartedAt() time.Time { return c.startTime }

func (c *rawConnection) Start() {
	c.startStopMut.Lock()
	defer c.startStopMut.Unlock()
	// reader, dispatcher, writer, pingSender and pingReceiver loops start here
	c.startTime = time.Now().Truncate(time.Second)
}

func (c *rawConnection) Close(err error) {
	c.sendCloseOnce.Do(func() {
		timeout := time.NewTimer(CloseTimeout)
		select {
		case c.closeBox <- err.Error():
		case <-timeout.C:
		case <-c.closed:
		}
	})
	go c.internalClose(err)
}

func (c *rawConnection) internalClose(err error) {
	c.startStopMut.Lock()
	defer c.startStopMut.Unlock()
	c.closeOnce.Do(func() {
		c.closer.Close()
		close(c.closed)
		c.model.Closed(err)
	})
}

type model struct {
	mut            sync.RWMutex
	connections    map[string]Connection
	deviceConnIDs  map[DeviceID][]string
	promotedConnID map[DeviceID]string
	closed         map[string]chan struct{}
}

func (m *model) AddConnection(conn Connection) {
	m.mut.Lock()
	defer m.mut.Unlock()
	m.connections[conn.ConnectionID()] = conn
	m.deviceConnIDs[conn.DeviceID()] = append(m.deviceConnIDs[conn.DeviceID()], conn.ConnectionID())
	m.closed[conn.ConnectionID()] = make(chan struct{})
}

func (m *model) promoteConnections() {
	m.mut.Lock()
	defer m.mut.Unlock()
	for deviceID, connIDs := range m.deviceConnIDs {
		if len(connIDs) == 0 || m.promotedConnID[deviceID] == connIDs[0] {
			continue
		}
		conn := m.connections[connIDs[0]]
		if conn.StartedAt().IsZero() {
			conn.Start()
		}
		m.promotedConnID[deviceID] = connIDs[0]
	}
}

func (m *model) Closed(conn Connection, err error) {
	connID := conn.ConnectionID()
	m.mut.Lock()
	delete(m.connections, connID)
	delete(m.deviceConnIDs, conn.DeviceID())
	delete(m.promotedConnID, conn.DeviceID())
	closed := m.closed[connID]
	delete(m.closed, connID)
	m.mut.Unlock()
	fmt.Println("connection", connID, "closed:", err)
	close(closed)
}

func newConnection(dev DeviceID, id string, m Model) Connection {
	cwm := &connectionWrappingModel{model: m}
	rc := &rawConnection{deviceID: dev, connID: id, model: cwm, closer: slowCloser{},
		closeBox: make(chan string), closed: make(chan struct{})}
	cwm.conn = rc
	return rc
}

func main() {
	m := &model{connections: map[string]Connection{}, deviceConnIDs: map[DeviceID][]string{},
		promotedConnID: map[DeviceID]string{}, closed: map[string]chan struct{}{}}
	conn := newConnection("AAAA", "tcp-1", m)
	m.AddConnection(conn)
	m.mut.RLock()
	closedCh := m.closed["tcp-1"]
	m.mut.RUnlock()

	// The connection service switches to a better connection and closes this one.
	conn.Close(errors.New("replacing connection"))
	// The promotion timer fires while the close is in progress.
	time.Sleep(50 * time.Millisecond)
	m.promoteConnections()
	<-closedCh
	fmt.Println("done")
}
