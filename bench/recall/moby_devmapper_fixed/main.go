// Project: Docker/moby (daemon/graphdriver/devmapper) -- FIXED TWIN.
// Change: cleanupDeletedDevices unlocks devices before the early return.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type devInfo struct {
	Hash     string
	DeviceID int
	Size     uint64
	Deleted  bool
}

type DeviceSet struct {
	sync.Mutex
	Devices              map[string]*devInfo
	NextDeviceID         int
	nrDeletedDevices     uint
	deletionWorkerTicker *time.Ticker
	baseFsSize           uint64
}

func (devices *DeviceSet) deleteDevice(info *devInfo) error {
	delete(devices.Devices, info.Hash)
	devices.nrDeletedDevices--
	return nil
}

// cleanupDeletedDevices is called periodically by the deletion worker.
func (devices *DeviceSet) cleanupDeletedDevices() error {
	devices.Lock()

	// If there are no deleted devices, there is nothing to do.
	if devices.nrDeletedDevices == 0 {
		devices.Unlock()
		return nil
	}

	var deletedDevices []*devInfo
	for _, info := range devices.Devices {
		if info.Deleted {
			deletedDevices = append(deletedDevices, info)
		}
	}
	devices.Unlock()

	for _, info := range deletedDevices {
		devices.Lock()
		if err := devices.deleteDevice(info); err != nil {
			devices.Unlock()
			return err
		}
		devices.Unlock()
	}
	return nil
}

func (devices *DeviceSet) startDeviceDeletionWorker() {
	for range devices.deletionWorkerTicker.C {
		devices.cleanupDeletedDevices()
	}
}

// AddDevice adds a device and registers in the hash.
func (devices *DeviceSet) AddDevice(hash, baseHash string) error {
	devices.Lock()
	defer devices.Unlock()

	if _, ok := devices.Devices[hash]; ok {
		return errors.New("devmapper: device " + hash + " already exists")
	}
	base, ok := devices.Devices[baseHash]
	if !ok {
		return fmt.Errorf("devmapper: unknown base device %q", baseHash)
	}
	devices.NextDeviceID++
	devices.Devices[hash] = &devInfo{Hash: hash, DeviceID: devices.NextDeviceID, Size: base.Size}
	return nil
}

func main() {
	devices := &DeviceSet{
		Devices:              map[string]*devInfo{"base": {Hash: "base", Size: 10 << 30}},
		deletionWorkerTicker: time.NewTicker(10 * time.Millisecond),
		baseFsSize:           10 << 30,
	}
	go devices.startDeviceDeletionWorker()

	time.Sleep(50 * time.Millisecond) // let the worker tick while idle
	for i := 0; i < 3; i++ {
		if err := devices.AddDevice(fmt.Sprintf("ctr-%d", i), "base"); err != nil {
			fmt.Println("AddDevice:", err)
		}
	}
	fmt.Println("created", len(devices.Devices)-1, "devices")
}
