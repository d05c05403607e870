// Fixed twin: shape of seaweedfs issue #1043 ("GetVolumeSyncStatus cause dead lock").
//
// The volume server's VolumeSyncStatus gRPC handler finds the volume in the
// store and calls Volume.GetVolumeSyncStatus, which locks the volume's
// dataFileAccessLock and, while holding it, asks the exported
// Volume.IndexFileSize for the index size. IndexFileSize locks
// dataFileAccessLock again, so the handler blocks on itself, and the
// heartbeat that collects volume sizes queues up behind it.
package main

import (
	"fmt"
	"sync"
	"time"
)

type VolumeId uint32

type NeedleMapper interface {
	IndexFileSize() uint64
	FileCount() int
}

type memNeedleMap struct {
	indexSize uint64
	count     int
}

func (nm *memNeedleMap) IndexFileSize() uint64 { return nm.indexSize }
func (nm *memNeedleMap) FileCount() int        { return nm.count }

type SuperBlock struct {
	CompactionRevision uint16
	Ttl                string
	Replication        string
}

type VolumeSyncStatusResponse struct {
	VolumeId        uint32
	Collection      string
	TailOffset      uint64
	IdxFileSize     uint64
	CompactRevision uint32
	Ttl             string
	Replication     string
}

type Volume struct {
	Id                 VolumeId
	Collection         string
	SuperBlock         SuperBlock
	dataFileAccessLock sync.RWMutex
	dataFileSize       int64
	nm                 NeedleMapper
}

func (v *Volume) Size() int64 {
	v.dataFileAccessLock.RLock()
	defer v.dataFileAccessLock.RUnlock()
	return v.dataFileSize
}

func (v *Volume) IndexFileSize() uint64 {
	v.dataFileAccessLock.Lock()
	defer v.dataFileAccessLock.Unlock()
	return v.nm.IndexFileSize()
}

func (v *Volume) GetVolumeSyncStatus() *VolumeSyncStatusResponse {
	v.dataFileAccessLock.Lock()
	defer v.dataFileAccessLock.Unlock()

	syncStatus := &VolumeSyncStatusResponse{VolumeId: uint32(v.Id)}
	syncStatus.TailOffset = uint64(v.dataFileSize)
	syncStatus.Collection = v.Collection
	syncStatus.IdxFileSize = v.nm.IndexFileSize() // lock already held
	syncStatus.CompactRevision = uint32(v.SuperBlock.CompactionRevision)
	syncStatus.Ttl = v.SuperBlock.Ttl
	syncStatus.Replication = v.SuperBlock.Replication
	return syncStatus
}

type DiskLocation struct {
	Directory   string
	volumesLock sync.RWMutex
	volumes     map[VolumeId]*Volume
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

func (s *Store) GetVolume(vid VolumeId) *Volume {
	for _, location := range s.Locations {
		if v, found := location.FindVolume(vid); found {
			return v
		}
	}
	return nil
}

// CollectHeartbeat is what the volume server sends to the master.
func (s *Store) CollectHeartbeat() (total int64) {
	for _, location := range s.Locations {
		location.volumesLock.RLock()
		for _, v := range location.volumes {
			total += v.Size()
		}
		location.volumesLock.RUnlock()
	}
	return total
}

type VolumeServer struct {
	store *Store
}

func (vs *VolumeServer) VolumeSyncStatus(volumeId uint32) (*VolumeSyncStatusResponse, error) {
	v := vs.store.GetVolume(VolumeId(volumeId))
	if v == nil {
		return nil, fmt.Errorf("not found volume id %d", volumeId)
	}
	return v.GetVolumeSyncStatus(), nil
}

func main() {
	loc := &DiskLocation{Directory: "/data", volumes: map[VolumeId]*Volume{}}
	for id := VolumeId(1); id <= 3; id++ {
		loc.volumes[id] = &Volume{Id: id, Collection: "pictures", dataFileSize: int64(id) * 1024,
			SuperBlock: SuperBlock{Replication: "001"}, nm: &memNeedleMap{indexSize: uint64(id) * 16}}
	}
	vs := &VolumeServer{store: &Store{Locations: []*DiskLocation{loc}}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // heartbeat loop to the master
		defer wg.Done()
		for i := 0; i < 5; i++ {
			fmt.Println("heartbeat, total size", vs.store.CollectHeartbeat())
			time.Sleep(10 * time.Millisecond)
		}
	}()
	go func() { // a replica's volume.sync asks for the status of volume 2
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		st, err := vs.VolumeSyncStatus(2)
		fmt.Println("sync status:", st, err)
	}()
	wg.Wait()
}
