// Project: moby/moby (Docker 0.9/0.10), devicemapper graph driver.
// Files: daemon/graphdriver/devmapper/deviceset.go (then
// graphdriver/devmapper/deviceset.go): DeviceSet.DeleteDevice,
// deleteDevice, removeDeviceAndWait, lookupDevice, log (the libdevmapper log
// callback that sets sawBusy); devmapper.go removeDevice/getInfo.
// Fix: moby/moby PR #4951 "Fix AB-BA deadlock in devicemapper backend"
// (Alexander Larsson, April 2014).
//
// DeviceSet embeds a global sync.Mutex and every DevInfo has its own lock.
// DeleteDevice takes the global lock, looks the device up in the Devices map
// and then takes the per-device lock. When the thin device is still busy
// (e.g. its mount is still held open), deleteDevice -> removeDeviceAndWait
// retries the dm remove: to let other work proceed while it sleeps it drops
// the global lock (devices.Unlock(); time.Sleep(); devices.Lock()) while still
// holding the device lock. A second `docker rm` of the same container
// meanwhile enters DeleteDevice, takes the now free global lock and blocks on
// the device lock. When the first goroutine wakes up it blocks re-taking the
// global lock: thread A holds device->wants global, thread B holds
// global->wants device. The fix gives the Devices map its own devicesLock
// (so lookups do not need the global lock) and defines the lock order
// "device lock before global lock", taken in that order everywhere.
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

var ErrBusy = errors.New("Device is Busy")

// ---- devmapper.go (libdevmapper wrapper, simulated) ----

type dmTable struct {
	mu          sync.Mutex
	active      map[string]bool
	busyRetries map[string]int
	logCallback func(level int, message string)
}

var dm = &dmTable{active: map[string]bool{}, busyRetries: map[string]int{}}

func getInfo(name string) (exists bool) {
	dm.mu.Lock()
	defer dm.mu.Unlock()
	return dm.active[name]
}

func removeDevice(name string) error {
	dm.mu.Lock()
	defer dm.mu.Unlock()
	if dm.busyRetries[name] > 0 {
		dm.busyRetries[name]--
		dm.logCallback(3, "device-mapper: remove ioctl failed: Device or resource busy")
		return ErrBusy
	}
	delete(dm.active, name)
	return nil
}

// ---- deviceset.go ----

type DevInfo struct {
	Hash     string
	DeviceId int
	lock     sync.Mutex
}

func (info *DevInfo) Name() string { return fmt.Sprintf("docker-8:1-1234-%s", info.Hash) }

type DeviceSet struct {
	sync.Mutex
	Devices map[string]*DevInfo
	sawBusy bool
}

func (devices *DeviceSet) log(level int, message string) {
	if strings.Contains(message, "Device or resource busy") {
		devices.sawBusy = true
	}
}

// lookupDevice requires the global lock to be held by the caller.
func (devices *DeviceSet) lookupDevice(hash string) (*DevInfo, error) {
	info := devices.Devices[hash]
	if info == nil {
		return nil, fmt.Errorf("Unknown device %s", hash)
	}
	return info, nil
}

// removeDeviceAndWait issues a dm remove; it retries on EBUSY, dropping the
// global lock while it waits for the device to become free.
func (devices *DeviceSet) removeDeviceAndWait(devname string) error {
	var err error
	for i := 0; i < 1000; i++ {
		devices.sawBusy = false
		err = removeDevice(devname)
		if err == nil {
			break
		}
		if !devices.sawBusy {
			return err
		}
		// If we see EBUSY it may be a transient error,
		// sleep a bit a retry a few times.
		devices.Unlock()
		time.Sleep(50 * time.Millisecond)
		devices.Lock()
	}
	return err
}

func (devices *DeviceSet) deleteDevice(info *DevInfo) error {
	if getInfo(info.Name()) {
		if err := devices.removeDeviceAndWait(info.Name()); err != nil {
			return err
		}
	}
	delete(devices.Devices, info.Hash)
	return nil
}

func (devices *DeviceSet) DeleteDevice(hash string) error {
	devices.Lock()
	defer devices.Unlock()

	info, err := devices.lookupDevice(hash)
	if err != nil {
		return err
	}

	info.lock.Lock()
	defer info.lock.Unlock()

	return devices.deleteDevice(info)
}

func main() {
	devices := &DeviceSet{Devices: map[string]*DevInfo{}}
	dm.logCallback = devices.log
	info := &DevInfo{Hash: "9f3c2e1d", DeviceId: 7}
	devices.Devices[info.Hash] = info
	dm.active[info.Name()] = true
	dm.busyRetries[info.Name()] = 1 // the container's mount is still busy

	var wg sync.WaitGroup
	for i := 1; i <= 2; i++ { // docker rm $ID & docker rm $ID
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			time.Sleep(time.Duration(n-1) * 20 * time.Millisecond)
			err := devices.DeleteDevice(info.Hash)
			fmt.Printf("rm #%d: %v\n", n, err)
		}(i)
	}
	wg.Wait()
}
