// Project: seaweedfs/seaweedfs (weed/storage/volume.go, volume_write.go, disk_location.go, store.go), 2.x/3.x volume server, 2021-2022 (approximate).
// Bug: Volume.Destroy was changed to take v.dataFileAccessLock so that a volume deletion cannot race a compaction or a write, but it still ended by calling the exported v.Close(), which takes dataFileAccessLock again, so a volume.delete request (Store.DeleteVolume, DiskLocation.DeleteVolume, deleteVolumeById, Destroy) hangs the volume server while it also holds the location's volumesLock (fixed by splitting out doClose, the lock-free body of Close).
package main

import (
	"fmt"
	"sync"
)

type VolumeId uint32

type NeedleMapper interface {
	FileCount() int
	Sync() error
	Close()
}

type memDb struct{ entries map[uint64]uint32 }

func (m *memDb) FileCount() int { return len(m.entries) }
func (m *memDb) Sync() error    { return nil }
func (m *memDb) Close()         {}

type BackendStorageFile interface {
	Sync() error
	Close() error
	Name() string
}

type DiskFile struct {
	name   string
	closed bool
}

func (f *DiskFile) Sync() error  { return nil }
func (f *DiskFile) Close() error { f.closed = true; return nil }
func (f *DiskFile) Name() string { return f.name }

type Volume struct {
	Id                 VolumeId
	dir                string
	Collection         string
	DataBackend        BackendStorageFile
	nm                 NeedleMapper
	dataFileAccessLock sync.RWMutex
	isCompacting       bool
	isCommitCompacting bool
}

func (v *Volume) FileName(ext string) string {
	return fmt.Sprintf("%s/%s_%d%s", v.dir, v.Collection, v.Id, ext)
}

func (v *Volume) FileCount() uint64 {
	v.dataFileAccessLock.RLock()
	defer v.dataFileAccessLock.RUnlock()
	if v.nm == nil {
		return 0
	}
	return uint64(v.nm.FileCount())
}

func (v *Volume) doIsEmpty() (bool, error) {
	return v.nm == nil || v.nm.FileCount() == 0, nil
}

// Close cleanly shuts down this volume
func (v *Volume) Close() {
	v.dataFileAccessLock.Lock()
	defer v.dataFileAccessLock.Unlock()

	v.doClose()
}

func (v *Volume) doClose() {
	if v.nm != nil {
		if err := v.nm.Sync(); err != nil {
			fmt.Println("Volume Close fail to sync volume idx", v.Id)
		}
		v.nm.Close()
		v.nm = nil
	}
	if v.DataBackend != nil {
		if err := v.DataBackend.Sync(); err != nil {
			fmt.Println("Volume Close fail to sync volume", v.Id)
		}
		_ = v.DataBackend.Close()
		v.DataBackend = nil
	}
}

func removeVolumeFiles(filename string) {
	fmt.Println("remove", filename+".dat", filename+".idx", filename+".vif")
}

// Destroy removes everything related to this volume
func (v *Volume) Destroy(onlyEmpty bool) (err error) {
	v.dataFileAccessLock.Lock()
	defer v.dataFileAccessLock.Unlock()

	if onlyEmpty {
		isEmpty, e := v.doIsEmpty()
		if e != nil {
			return fmt.Errorf("failed to read isEmpty %v", e)
		}
		if !isEmpty {
			return fmt.Errorf("volume %d not empty", v.Id)
		}
	}
	if v.isCompacting || v.isCommitCompacting {
		return fmt.Errorf("volume %d is compacting", v.Id)
	}
	v.Close()
	removeVolumeFiles(v.FileName(""))
	return
}

type DiskLocation struct {
	Directory   string
	volumes     map[VolumeId]*Volume
	volumesLock sync.RWMutex
}

func (l *DiskLocation) deleteVolumeById(vid VolumeId, onlyEmpty bool) (found bool, e error) {
	v, ok := l.volumes[vid]
	if !ok {
		return
	}
	e = v.Destroy(onlyEmpty)
	if e != nil {
		return
	}
	found = true
	delete(l.volumes, vid)
	return
}

func (l *DiskLocation) DeleteVolume(vid VolumeId, onlyEmpty bool) error {
	l.volumesLock.Lock()
	defer l.volumesLock.Unlock()

	_, ok := l.volumes[vid]
	if !ok {
		return fmt.Errorf("Volume not found, VolumeId: %d", vid)
	}
	_, err := l.deleteVolumeById(vid, onlyEmpty)
	return err
}

func (l *DiskLocation) FindVolume(vid VolumeId) (*Volume, bool) {
	l.volumesLock.RLock()
	defer l.volumesLock.RUnlock()
	v, ok := l.volumes[vid]
	return v, ok
}

type Store struct {
	Locations []*DiskLocation
}

func (s *Store) DeleteVolume(i VolumeId, onlyEmpty bool) error {
	for _, location := range s.Locations {
		if _, found := location.FindVolume(i); !found {
			continue
		}
		if err := location.DeleteVolume(i, onlyEmpty); err != nil {
			return err
		}
		fmt.Println("DeleteVolume", i)
		return nil
	}
	return fmt.Errorf("volume %d not found on disk", i)
}

func main() {
	loc := &DiskLocation{Directory: "/data", volumes: map[VolumeId]*Volume{}}
	for id := VolumeId(1); id <= 3; id++ {
		v := &Volume{Id: id, dir: loc.Directory, Collection: "pictures", nm: &memDb{entries: map[uint64]uint32{1: 8}}}
		v.DataBackend = &DiskFile{name: v.FileName(".dat")}
		loc.volumes[id] = v
	}
	s := &Store{Locations: []*DiskLocation{loc}}

	// weed shell: volume.delete -node ... -volumeId 2 (VolumeServer.VolumeDelete)
	if err := s.DeleteVolume(2, false); err != nil {
		fmt.Println("delete:", err)
	}
	v1, _ := loc.FindVolume(1)
	fmt.Println("remaining volumes:", len(loc.volumes), "v1 files:", v1.FileCount())
}
