// Project: Syncthing, lib/model.Model (fmut / pmut).
// Bug: approximate (one of several "lock order inversion" fixes in lib/model): Model.Index, run on
// a connection's reader goroutine, took m.pmut (to look up the device's connection and download
// state) and then m.fmut (to find the folder's FileSet), while Model.ClusterConfig took m.fmut
// (write) and then m.pmut (write) to record the remote's paused folders: AB-BA.
// Fix: acquire fmut before pmut everywhere (the documented lock order in model.go).
package syncthingindex

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type DeviceID string

type FileInfo struct {
	Name    string
	Version int
}

type FileSet struct {
	mu    sync.Mutex
	files map[DeviceID]map[string]FileInfo
}

func (s *FileSet) Update(dev DeviceID, fs []FileInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files[dev] == nil {
		s.files[dev] = map[string]FileInfo{}
	}
	for _, f := range fs {
		s.files[dev][f.Name] = f
	}
}

type Connection interface {
	ID() DeviceID
	Name() string
}

type conn struct{ id DeviceID }

func (c conn) ID() DeviceID { return c.id }
func (c conn) Name() string { return "tcp-client" }

type ClusterConfig struct{ Folders []Folder }
type Folder struct {
	ID     string
	Paused bool
}

type Model struct {
	fmut          sync.RWMutex // protects the below
	folderFiles   map[string]*FileSet
	folderDevices map[string]map[DeviceID]bool

	pmut                sync.RWMutex // protects the below
	conn                map[DeviceID]Connection
	deviceDownloads     map[DeviceID]int
	remotePausedFolders map[DeviceID][]string
}

// Index is called when a new device is connected and we receive their full index.
func (m *Model) Index(deviceID DeviceID, folder string, fs []FileInfo) error {
	m.pmut.RLock()
	c, ok := m.conn[deviceID]
	downloads := m.deviceDownloads[deviceID]
	time.Sleep(20 * time.Millisecond) // widen the window
	m.fmut.RLock()
	files, existing := m.folderFiles[folder]
	shared := m.folderDevices[folder][deviceID]
	m.fmut.RUnlock()
	m.pmut.RUnlock()
	if !ok {
		return fmt.Errorf("index from unconnected device %s", deviceID)
	}
	if !existing || !shared {
		return fmt.Errorf("%s (%s): unexpected index for folder %q", deviceID, c.Name(), folder)
	}
	_ = downloads
	files.Update(deviceID, fs)
	return nil
}

// ClusterConfig is received from a remote device after connecting.
func (m *Model) ClusterConfig(deviceID DeviceID, cm ClusterConfig) error {
	m.fmut.Lock()
	defer m.fmut.Unlock()
	var paused []string
	for _, f := range cm.Folders {
		if f.Paused {
			paused = append(paused, f.ID)
			continue
		}
		if m.folderDevices[f.ID] == nil {
			m.folderDevices[f.ID] = map[DeviceID]bool{}
		}
		m.folderDevices[f.ID][deviceID] = true
	}
	time.Sleep(20 * time.Millisecond) // widen the window
	m.pmut.Lock()
	m.remotePausedFolders[deviceID] = paused
	m.pmut.Unlock()
	return nil
}

func TestModelLockOrderInversion(t *testing.T) {
	devA, devB := DeviceID("AAAA-AAAA"), DeviceID("BBBB-BBBB")
	m := &Model{
		folderFiles:         map[string]*FileSet{"default": {files: map[DeviceID]map[string]FileInfo{}}},
		folderDevices:       map[string]map[DeviceID]bool{"default": {devA: true}},
		conn:                map[DeviceID]Connection{devA: conn{devA}, devB: conn{devB}},
		deviceDownloads:     map[DeviceID]int{},
		remotePausedFolders: map[DeviceID][]string{},
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // reader goroutine of device A's connection
		defer wg.Done()
		if err := m.Index(devA, "default", []FileInfo{{"a.txt", 1}}); err != nil {
			t.Errorf("index: %v", err)
		}
	}()
	go func() { // reader goroutine of device B's connection
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		if err := m.ClusterConfig(devB, ClusterConfig{Folders: []Folder{{ID: "default"}, {ID: "photos", Paused: true}}}); err != nil {
			t.Errorf("cluster config: %v", err)
		}
	}()
	wg.Wait()
}
