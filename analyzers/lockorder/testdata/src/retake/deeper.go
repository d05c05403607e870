package retake

import (
	"errors"
	"sync"
	"time"
)

// The retake two calls down (devicemapper's DeleteDevice -> deleteDevice
// -> removeDeviceAndWait, which gives the DeviceSet lock up while the
// device stays busy): the middle function holds nothing, so the retake
// goes up to the caller that holds the device's lock under the set's.

type DeviceSet struct {
	mu      sync.Mutex
	devices map[string]*Device
	busy    int
}

type Device struct {
	mu   sync.Mutex
	refs int
}

func (d *DeviceSet) remove() error {
	if d.busy > 0 {
		d.busy--
		return errors.New("busy")
	}
	return nil
}

// removeAndWait runs with d.mu held.
func (d *DeviceSet) removeAndWait() error {
	var err error
	for i := 0; i < 100; i++ {
		if err = d.remove(); err == nil {
			break
		}
		d.mu.Unlock()
		time.Sleep(time.Millisecond)
		d.mu.Lock()
	}
	return err
}

func (d *DeviceSet) deleteDevice(hash string) error {
	if err := d.removeAndWait(); err != nil {
		return err
	}
	delete(d.devices, hash)
	return nil
}

func (d *DeviceSet) DeleteDevice(hash string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	it := d.devices[hash]
	it.mu.Lock()
	defer it.mu.Unlock()
	return d.deleteDevice(hash) // want `lock order inversion: DeviceSet.mu then Device.mu in DeviceSet.DeleteDevice .* but Device.mu then DeviceSet.mu in DeviceSet.DeleteDevice .*via DeviceSet.deleteDevice -> DeviceSet.removeAndWait`
}

// The fix: the device's lock is let go before the set's is given up.
func (d *DeviceSet) DeleteDeviceFixed(hash string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	it := d.devices[hash]
	it.mu.Lock()
	it.refs = 0
	it.mu.Unlock()
	return d.deleteDevice(hash)
}

var _ = []any{(*DeviceSet).DeleteDevice, (*DeviceSet).DeleteDeviceFixed}
