// FIXED TWIN. Project: syncthing (lib/model).
// Bug (approximate, from memory): lock-order inversion between model.fmut
// (folder state) and model.pmut (per-device connection state). The
// documented order is "fmut before pmut", but Model.Closed() took pmut and
// then, through a helper, took fmut, while ClusterConfig() holds fmut and
// looks up the device connection under pmut. Fixed by doing the pmut work
// in Closed() first, releasing pmut, and only then touching folder state.
// Issue/PR number not remembered (approximate).
package syncthing_model_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type DeviceID string

type FolderConfiguration struct {
	ID      string
	Devices []DeviceID
}

type Folder struct {
	ID      string
	Devices []DeviceID
}

type ClusterConfig struct {
	Folders []Folder
}

type Connection interface {
	ID() DeviceID
	ClusterConfig(cc ClusterConfig)
	Close(err error)
}

type fakeConn struct {
	id DeviceID
}

func (c *fakeConn) ID() DeviceID { return c.id }
func (c *fakeConn) ClusterConfig(ClusterConfig) {
	time.Sleep(10 * time.Millisecond) // network write
}
func (c *fakeConn) Close(error) {}

type deviceDownloadState struct {
	folders map[string][]string
}

type model struct {
	fmut               sync.RWMutex // protects the folder* maps
	folderCfgs         map[string]FolderConfiguration
	folderDevices      map[string][]DeviceID
	deviceFolders      map[DeviceID][]string
	remoteIndexUpdated map[string]int

	pmut            sync.RWMutex // protects conn, deviceDownloads
	conn            map[DeviceID]Connection
	deviceDownloads map[DeviceID]*deviceDownloadState
	closed          map[DeviceID]chan struct{}
}

func newModel() *model {
	return &model{
		folderCfgs:         make(map[string]FolderConfiguration),
		folderDevices:      make(map[string][]DeviceID),
		deviceFolders:      make(map[DeviceID][]string),
		remoteIndexUpdated: make(map[string]int),
		conn:               make(map[DeviceID]Connection),
		deviceDownloads:    make(map[DeviceID]*deviceDownloadState),
		closed:             make(map[DeviceID]chan struct{}),
	}
}

func (m *model) AddFolder(cfg FolderConfiguration) {
	m.fmut.Lock()
	defer m.fmut.Unlock()
	m.folderCfgs[cfg.ID] = cfg
	m.folderDevices[cfg.ID] = append([]DeviceID(nil), cfg.Devices...)
	for _, d := range cfg.Devices {
		m.deviceFolders[d] = append(m.deviceFolders[d], cfg.ID)
	}
}

func (m *model) AddConnection(conn Connection) {
	m.pmut.Lock()
	defer m.pmut.Unlock()
	m.conn[conn.ID()] = conn
	m.deviceDownloads[conn.ID()] = &deviceDownloadState{folders: map[string][]string{}}
	m.closed[conn.ID()] = make(chan struct{})
}

// connectionFor takes pmut.
func (m *model) connectionFor(deviceID DeviceID) (Connection, bool) {
	m.pmut.RLock()
	conn, ok := m.conn[deviceID]
	m.pmut.RUnlock()
	return conn, ok
}

// folderSharedWith takes fmut.
func (m *model) folderSharedWith(folder string, deviceID DeviceID) bool {
	m.fmut.RLock()
	defer m.fmut.RUnlock()
	for _, d := range m.folderDevices[folder] {
		if d == deviceID {
			return true
		}
	}
	return false
}

// ClusterConfig is called when the remote device sends its cluster config.
// It holds fmut while updating folder state and replying on the connection.
func (m *model) ClusterConfig(deviceID DeviceID, cm ClusterConfig) error {
	m.fmut.Lock()
	defer m.fmut.Unlock()

	for _, folder := range cm.Folders {
		if _, ok := m.folderCfgs[folder.ID]; !ok {
			continue
		}
		m.remoteIndexUpdated[folder.ID]++
		time.Sleep(50 * time.Millisecond) // index bookkeeping, widens the window
	}

	conn, ok := m.connectionFor(deviceID)
	if !ok {
		return errors.New("device not connected")
	}
	conn.ClusterConfig(m.generateClusterConfigFLocked(deviceID))
	return nil
}

func (m *model) generateClusterConfigFLocked(deviceID DeviceID) ClusterConfig {
	var cc ClusterConfig
	for _, id := range m.deviceFolders[deviceID] {
		cc.Folders = append(cc.Folders, Folder{ID: id, Devices: m.folderDevices[id]})
	}
	return cc
}

// Closed is called when a connection has been closed.
func (m *model) Closed(conn Connection, err error) {
	device := conn.ID()

	m.pmut.Lock()
	closed, ok := m.closed[device]
	if !ok {
		m.pmut.Unlock()
		return
	}
	delete(m.conn, device)
	downloads := m.deviceDownloads[device]
	delete(m.deviceDownloads, device)
	delete(m.closed, device)
	time.Sleep(50 * time.Millisecond) // widens the window
	m.pmut.Unlock()                   // FIX: release pmut before touching folder state (fmut before pmut)

	m.progressEmitterForget(device, downloads)
	close(closed)
}

// progressEmitterForget drops download progress for all folders that were
// shared with the device; it consults folder state under fmut.
func (m *model) progressEmitterForget(device DeviceID, downloads *deviceDownloadState) {
	for folder := range downloads.folders {
		if m.folderSharedWith(folder, device) {
			delete(downloads.folders, folder)
		}
	}
}

func TestClusterConfigVsClosed(t *testing.T) {
	m := newModel()
	dev := DeviceID("AAAA-BBBB")
	m.AddFolder(FolderConfiguration{ID: "default", Devices: []DeviceID{dev}})
	conn := &fakeConn{id: dev}
	m.AddConnection(conn)
	m.pmut.Lock()
	m.deviceDownloads[dev].folders["default"] = []string{"file1"}
	m.pmut.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = m.ClusterConfig(dev, ClusterConfig{Folders: []Folder{{ID: "default", Devices: []DeviceID{dev}}}})
	}()
	go func() {
		defer wg.Done()
		m.Closed(conn, errors.New("connection reset"))
	}()
	wg.Wait()
}
