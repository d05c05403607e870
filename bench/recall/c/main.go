package main

import "sync"

type device struct {
	lock sync.Mutex
	size int
}

type deviceSet struct {
	sync.Mutex
	devices map[string]*device
}

func (ds *deviceSet) lookup(h string) *device {
	ds.Lock()
	defer ds.Unlock()
	return ds.devices[h]
}

func (ds *deviceSet) remove(h string) {
	info := ds.lookup(h)
	info.lock.Lock()
	defer info.lock.Unlock()
	ds.Lock()
	delete(ds.devices, h)
	ds.Unlock()
}

func (ds *deviceSet) resizeAll() {
	ds.Lock()
	defer ds.Unlock()
	for _, d := range ds.devices {
		d.lock.Lock()
		d.size++
		d.lock.Unlock()
	}
}

func main() {
	ds := &deviceSet{devices: map[string]*device{"a": {}}}
	go ds.resizeAll()
	ds.remove("a")
}
