// Fixed twin: shape of syncthing PR #3823 ("lib/model: Fix lock order", merged as
// aa3ef49): "generateClusterConfig acquires fmut".
//
// The model's lock order is fmut before pmut. Model.AddConnection locks pmut
// to register the new connection and, still holding it, builds the cluster
// config for the device with generateClusterConfig, which read-locks fmut.
// A config commit that removes a folder runs Model.RemoveFolder, which locks
// fmut and then pmut to close the connections sharing the folder.
package main

import (
	"fmt"
	"sync"
	"time"
)

type DeviceID string

type ClusterConfigMessage struct {
	DeviceName string
	Folders    []string
}

type HelloMessage struct {
	DeviceName    string
	ClientName    string
	ClientVersion string
}

type Connection interface {
	ID() DeviceID
	Start()
	ClusterConfig(ClusterConfigMessage)
	Close()
}

type tlsConn struct {
	id     DeviceID
	mut    sync.Mutex
	closed bool
	sent   []ClusterConfigMessage
}

func (c *tlsConn) ID() DeviceID { return c.id }
func (c *tlsConn) Start()       {}
func (c *tlsConn) ClusterConfig(cm ClusterConfigMessage) {
	c.mut.Lock()
	c.sent = append(c.sent, cm)
	c.mut.Unlock()
}
func (c *tlsConn) Close() { c.mut.Lock(); c.closed = true; c.mut.Unlock() }

// eventLogger stands in for events.Default; delivery to a slow GUI
// subscriber takes a while.
type eventLogger struct {
	mut    sync.Mutex
	events []string
}

func (e *eventLogger) Log(t string, data map[string]string) {
	time.Sleep(40 * time.Millisecond)
	e.mut.Lock()
	e.events = append(e.events, t)
	e.mut.Unlock()
}

var events = &eventLogger{}

type Model struct {
	folderDevices map[string][]DeviceID // folder -> deviceIDs
	deviceFolders map[DeviceID][]string // deviceID -> folders
	fmut          sync.RWMutex          // protects the above

	conn          map[DeviceID]Connection
	helloMessages map[DeviceID]HelloMessage
	pmut          sync.RWMutex // protects the above
}

func (m *Model) AddConnection(conn Connection, hello HelloMessage) {
	deviceID := conn.ID()

	m.pmut.Lock()
	m.conn[deviceID] = conn
	m.helloMessages[deviceID] = hello
	events.Log("DeviceConnected", map[string]string{"id": string(deviceID), "deviceName": hello.DeviceName})

	conn.Start()
	m.pmut.Unlock()

	// Acquires fmut, so has to be done outside of pmut.
	cm := m.generateClusterConfig(deviceID)
	conn.ClusterConfig(cm)
}

func (m *Model) generateClusterConfig(device DeviceID) ClusterConfigMessage {
	m.fmut.RLock()
	defer m.fmut.RUnlock()
	cm := ClusterConfigMessage{DeviceName: "local"}
	cm.Folders = append(cm.Folders, m.deviceFolders[device]...)
	return cm
}

func (m *Model) RemoveFolder(folder string) {
	m.fmut.Lock()
	m.pmut.Lock()
	// Close connections to affected devices.
	for _, dev := range m.folderDevices[folder] {
		if conn, ok := m.conn[dev]; ok {
			closeRawConn(conn)
		}
	}
	delete(m.folderDevices, folder)
	for dev, folders := range m.deviceFolders {
		m.deviceFolders[dev] = stringSliceWithout(folders, folder)
	}
	m.pmut.Unlock()
	m.fmut.Unlock()
}

func closeRawConn(conn Connection) { conn.Close() }

func stringSliceWithout(ss []string, s string) []string {
	out := ss[:0:0]
	for _, x := range ss {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// CommitConfiguration is the config wrapper's callback into the model.
func (m *Model) CommitConfiguration(removedFolders []string) bool {
	for _, f := range removedFolders {
		m.RemoveFolder(f)
	}
	return true
}

func main() {
	peer := DeviceID("MFZWI3D")
	m := &Model{
		folderDevices: map[string][]DeviceID{"default": {peer}, "photos": {peer}},
		deviceFolders: map[DeviceID][]string{peer: {"default", "photos"}},
		conn:          map[DeviceID]Connection{},
		helloMessages: map[DeviceID]HelloMessage{},
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // connection service: a handshake with the peer completed
		defer wg.Done()
		m.AddConnection(&tlsConn{id: peer}, HelloMessage{DeviceName: "laptop", ClientName: "syncthing", ClientVersion: "v0.14.15"})
	}()
	go func() { // the GUI removed the "photos" folder
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		m.CommitConfiguration([]string{"photos"})
	}()
	wg.Wait()
	fmt.Println("folders of", peer, m.generateClusterConfig(peer).Folders)
}
