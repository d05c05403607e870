// Project: minio/minio (namespace-lock.go nsLockMap.lock/unlock, used by the XL erasure layer xl-erasure-v1 ReadFile/CreateFile), April 2016.
// Bug: nsLockMap.lock kept the map mutex held while it blocked on the per-resource RWMutex of the namespace entry, and
// nsLockMap.unlock needs the map mutex before it can release that entry, so a GET waiting for an object that a PUT is
// still writing holds the map mutex forever and the PUT can never unlock the object (PR #1420 "lock: bug fixes.", which
// releases the map mutex before locking the entry; names of the era approximate).
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// nsParam - carries name space resource.
type nsParam struct{ volume, path string }

// nsLock - provides primitives for locking critical namespace regions.
type nsLock struct {
	*sync.RWMutex
	ref uint
}

// nsLockMap - namespace lock map, provides primitives to Lock,
// Unlock, RLock and RUnlock.
type nsLockMap struct {
	lockMap map[nsParam]*nsLock
	mutex   *sync.Mutex
}

// Global name space lock.
var nsMutex *nsLockMap

// initNSLock - initialize name space lock map.
func initNSLock() {
	nsMutex = &nsLockMap{
		lockMap: make(map[nsParam]*nsLock),
		mutex:   &sync.Mutex{},
	}
}

// Lock the namespace resource.
func (n *nsLockMap) lock(volume, path string, readLock bool) {
	n.mutex.Lock()

	param := nsParam{volume, path}
	nsLk, found := n.lockMap[param]
	if !found {
		nsLk = &nsLock{
			RWMutex: &sync.RWMutex{},
			ref:     0,
		}
		n.lockMap[param] = nsLk
	}
	nsLk.ref++ // Update ref count here to avoid multiple races.
	// Unlock map before Locking NS which might block.
	n.mutex.Unlock()

	// Locking here can block.
	if readLock {
		nsLk.RLock()
	} else {
		nsLk.Lock()
	}
}

// Unlock the namespace resource.
func (n *nsLockMap) unlock(volume, path string, readLock bool) {
	// nsLk.Unlock() will not block, hence locking the map for the entire function is fine.
	n.mutex.Lock()
	defer n.mutex.Unlock()

	param := nsParam{volume, path}
	if nsLk, found := n.lockMap[param]; found {
		if readLock {
			nsLk.RUnlock()
		} else {
			nsLk.Unlock()
		}
		if nsLk.ref != 0 {
			nsLk.ref--
		}
		if nsLk.ref == 0 {
			// Remove from the map if there are no more references.
			delete(n.lockMap, param)
		}
	}
}

func (n *nsLockMap) Lock(volume, path string)    { n.lock(volume, path, false) }
func (n *nsLockMap) Unlock(volume, path string)  { n.unlock(volume, path, false) }
func (n *nsLockMap) RLock(volume, path string)   { n.lock(volume, path, true) }
func (n *nsLockMap) RUnlock(volume, path string) { n.unlock(volume, path, true) }

// StorageAPI - storage interface implemented by fs and XL.
type StorageAPI interface {
	CreateFile(volume, path string, data []byte) error
	ReadFile(volume, path string, offset int64) (io.ReadCloser, error)
}

type memDisk struct { // one posix disk of the erasure set
	mu    sync.Mutex
	files map[string][]byte
}

func (d *memDisk) write(volume, path string, shard []byte) {
	time.Sleep(100 * time.Millisecond) // slow disk
	d.mu.Lock()
	d.files[volume+"/"+path] = shard
	d.mu.Unlock()
}

func (d *memDisk) read(volume, path string) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.files[volume+"/"+path]
}

// XL - erasure coded storage layer.
type XL struct {
	storageDisks []*memDisk
}

// writeErasure - erasure encodes the incoming data and writes a shard to each disk.
func (xl XL) writeErasure(volume, path string, data []byte) error {
	nsMutex.Lock(volume, path)
	defer nsMutex.Unlock(volume, path)

	shardSize := (len(data) + len(xl.storageDisks) - 1) / len(xl.storageDisks)
	for i, disk := range xl.storageDisks {
		start := i * shardSize
		end := min(start+shardSize, len(data))
		disk.write(volume, path, data[start:end])
	}
	return nil
}

// CreateFile - create a file.
func (xl XL) CreateFile(volume, path string, data []byte) error {
	return xl.writeErasure(volume, path, data)
}

// ReadFile - read file.
func (xl XL) ReadFile(volume, path string, offset int64) (io.ReadCloser, error) {
	// Acquire a read lock.
	nsMutex.RLock(volume, path)
	defer nsMutex.RUnlock(volume, path)

	var buf bytes.Buffer
	for _, disk := range xl.storageDisks {
		buf.Write(disk.read(volume, path))
	}
	if buf.Len() == 0 {
		return nil, errors.New("file not found")
	}
	return io.NopCloser(bytes.NewReader(buf.Bytes()[offset:])), nil
}

type objectAPI struct{ storage StorageAPI } // object layer on top of a StorageAPI

func (o objectAPI) PutObject(bucket, object string, data []byte) error {
	return o.storage.CreateFile(bucket, object, data)
}
func (o objectAPI) GetObject(bucket, object string, startOffset int64) (io.ReadCloser, error) {
	return o.storage.ReadFile(bucket, object, startOffset)
}

func main() {
	initNSLock()
	xl := &XL{}
	for i := 0; i < 4; i++ {
		xl.storageDisks = append(xl.storageDisks, &memDisk{files: map[string][]byte{}})
	}
	api := objectAPI{storage: xl}
	_ = api.PutObject("bucket", "object", []byte("first version of the object"))

	done := make(chan string, 2)
	go func() { // PUT overwriting the object
		err := api.PutObject("bucket", "object", []byte("second version of the object"))
		done <- fmt.Sprint("put: ", err)
	}()
	time.Sleep(50 * time.Millisecond)
	go func() { // concurrent GET of the same object
		rc, err := api.GetObject("bucket", "object", 0)
		if err != nil {
			done <- fmt.Sprint("get: ", err)
			return
		}
		b, _ := io.ReadAll(rc)
		done <- "get: " + string(b)
	}()
	fmt.Println(<-done)
	fmt.Println(<-done)
}
