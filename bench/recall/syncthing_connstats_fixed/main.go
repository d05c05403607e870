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
	m.fmut.RLock()
	time.Sleep(20 * time.Millisecond)
	m.pmut.RLock()

	res := make(map[string]interface{})
	for dev, c := range m.conn {
		res[string(dev)] = map[string]interface{}{
			"address": c.Address,
			"folders": len(m.deviceFolders[dev]),
		}
	}

	m.pmut.RUnlock()
	m.fmut.RUnlock()
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
