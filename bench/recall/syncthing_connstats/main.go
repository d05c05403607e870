// Project: syncthing (lib/model/model.go)
// Bug: the documented order is fmut before pmut. ConnectionStats (GUI/REST
// goroutine) takes pmut.RLock then fmut.RLock, while RestartFolder (config
// commit goroutine) takes fmut.Lock then pmut.Lock. Each holds its first lock
// and waits for the other's: AB-BA between the folder and the peer mutexes.
// Upstream fix: take fmut before pmut in ConnectionStats (syncthing/syncthing#3597).
package main

import (
	"fmt"
	"sync"
	"time"
)

type DeviceID string

type FolderConfiguration struct {
	ID      string
	Devices []DeviceID
}

type Connection struct {
	ID      DeviceID
	Address string
}

type Model struct {
	fmut             sync.RWMutex // protects the below
	folderCfgs       map[string]FolderConfiguration
	folderDevices    map[string][]DeviceID
	deviceFolders    map[DeviceID][]string
	pmut             sync.RWMutex // protects the below
	conn             map[DeviceID]Connection
	deviceDownloads  map[DeviceID]int
	deviceStatistics map[DeviceID]time.Time
}

func NewModel() *Model {
	return &Model{
		folderCfgs:       map[string]FolderConfiguration{"default": {ID: "default", Devices: []DeviceID{"SYNO4VL"}}},
		folderDevices:    map[string][]DeviceID{"default": {"SYNO4VL"}},
		deviceFolders:    map[DeviceID][]string{"SYNO4VL": {"default"}},
		conn:             map[DeviceID]Connection{"SYNO4VL": {ID: "SYNO4VL", Address: "172.16.32.11:22000"}},
		deviceDownloads:  map[DeviceID]int{},
		deviceStatistics: map[DeviceID]time.Time{},
	}
}

// ConnectionStats returns a map with connection statistics for each device.
func (m *Model) ConnectionStats() map[string]interface{} {
	m.pmut.RLock()
	time.Sleep(20 * time.Millisecond)
	m.fmut.RLock() // DEADLOCK HERE

	res := make(map[string]interface{})
	for dev, c := range m.conn {
		res[string(dev)] = map[string]interface{}{
			"address": c.Address,
			"folders": len(m.deviceFolders[dev]),
		}
	}

	m.fmut.RUnlock()
	m.pmut.RUnlock()
	return res
}

func (m *Model) tearDownFolderLocked(folder string) {
	for _, dev := range m.folderDevices[folder] {
		delete(m.deviceDownloads, dev)
	}
	delete(m.folderCfgs, folder)
	delete(m.folderDevices, folder)
}

func (m *Model) RestartFolder(cfg FolderConfiguration) {
	m.fmut.Lock()
	time.Sleep(10 * time.Millisecond)
	m.pmut.Lock()

	m.tearDownFolderLocked(cfg.ID)
	m.folderCfgs[cfg.ID] = cfg
	m.folderDevices[cfg.ID] = cfg.Devices

	m.pmut.Unlock()
	m.fmut.Unlock()
}

func main() {
	m := NewModel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		fmt.Println("connections:", m.ConnectionStats())
	}()
	go func() {
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		m.RestartFolder(FolderConfiguration{ID: "default", Devices: nil})
		fmt.Println("folder restarted")
	}()
	wg.Wait()
}
