// Project: minio/minio (pkg/donut/multipart.go API.CreateObjectPart, ListObjectParts, CompleteMultipartUpload; pkg/donut/cache/metadata, pkg/donut/cache/data), July 2015.
// Bug: the in-memory donut API serializes every call on donut.lock and CreateObjectPart releases it by hand on each return path, but the early return taken when the part number was already uploaded (the client retries a part, so the stored ETag is returned) skips donut.lock.Unlock(). The retried upload succeeds, yet the lock stays held and the next S3 call on the server, here ListObjectParts and CompleteMultipartUpload of the same upload, blocks forever on donut.lock (PR #707 "Fix another deadlock inside CreateObjectPart() code, premature return without Unlocking()"; which early return leaked the lock is reconstructed, approximate).
// Fix (applied here): the premature return for an already uploaded part now unlocks donut.lock first, as in PR #707.
package b113miniopartretryfixed

import (
	"bytes"
	"container/list"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"sync"
	"testing"
	"time"
)

// metadata.Cache is the bucket metadata map of the in-memory donut.
type metadataCache struct {
	sync.RWMutex
	items map[string]interface{}
}

func (r *metadataCache) Get(key string) interface{} {
	r.RLock()
	defer r.RUnlock()
	return r.items[key]
}

func (r *metadataCache) Exists(key string) bool {
	r.RLock()
	defer r.RUnlock()
	_, ok := r.items[key]
	return ok
}

func (r *metadataCache) Set(key string, value interface{}) bool {
	r.Lock()
	defer r.Unlock()
	r.items[key] = value
	return true
}

// data.Cache is the trove holding object and part bytes.
type dataCache struct {
	*sync.Mutex
	items        *list.List
	reverseItems map[interface{}]*list.Element
}

type element struct {
	key   interface{}
	value []byte
}

func newDataCache() *dataCache {
	return &dataCache{Mutex: &sync.Mutex{}, items: list.New(), reverseItems: map[interface{}]*list.Element{}}
}

func (r *dataCache) Append(key interface{}, value []byte) bool {
	r.Lock()
	defer r.Unlock()
	if ele, ok := r.reverseItems[key]; ok {
		ele.Value.(*element).value = append(ele.Value.(*element).value, value...)
		return true
	}
	r.reverseItems[key] = r.items.PushFront(&element{key: key, value: append([]byte(nil), value...)})
	return true
}

func (r *dataCache) Get(key interface{}) ([]byte, bool) {
	r.Lock()
	defer r.Unlock()
	ele, ok := r.reverseItems[key]
	if !ok {
		return nil, false
	}
	return ele.Value.(*element).value, true
}

type MultiPartSession struct {
	uploadID   string
	initiated  time.Time
	totalParts int
}

type PartMetadata struct {
	PartNumber   int
	LastModified time.Time
	ETag         string
	Size         int64
}

type storedBucket struct {
	multiPartSession map[string]MultiPartSession
	partMetadata     map[int]PartMetadata
}

type InvalidUploadID struct{ UploadID string }

func (e InvalidUploadID) Error() string { return "Invalid upload id " + e.UploadID }

type BucketNotFound struct{ Bucket string }

func (e BucketNotFound) Error() string { return "Bucket not found: " + e.Bucket }

// API is the in-memory donut driver.
type API struct {
	lock             *sync.Mutex
	storedBuckets    *metadataCache
	multiPartObjects map[string]*dataCache
}

func New() API {
	return API{lock: &sync.Mutex{}, storedBuckets: &metadataCache{items: map[string]interface{}{}}, multiPartObjects: map[string]*dataCache{}}
}

func (donut API) MakeBucket(bucket string) {
	donut.lock.Lock()
	defer donut.lock.Unlock()
	donut.storedBuckets.Set(bucket, storedBucket{multiPartSession: map[string]MultiPartSession{}, partMetadata: map[int]PartMetadata{}})
}

// NewMultipartUpload - initiate a new multipart session
func (donut API) NewMultipartUpload(bucket, key string) (string, error) {
	donut.lock.Lock()
	defer donut.lock.Unlock()
	if !donut.storedBuckets.Exists(bucket) {
		return "", BucketNotFound{Bucket: bucket}
	}
	sb := donut.storedBuckets.Get(bucket).(storedBucket)
	uploadID := fmt.Sprintf("%x", md5.Sum([]byte(bucket+key)))
	sb.multiPartSession[key] = MultiPartSession{uploadID: uploadID, initiated: time.Now()}
	donut.multiPartObjects[uploadID] = newDataCache()
	donut.storedBuckets.Set(bucket, sb)
	return uploadID, nil
}

// CreateObjectPart - create a part in a multipart session
func (donut API) CreateObjectPart(bucket, key, uploadID string, partID int, contentType string, size int64, data io.Reader) (string, error) {
	donut.lock.Lock()
	if !donut.storedBuckets.Exists(bucket) {
		donut.lock.Unlock()
		return "", BucketNotFound{Bucket: bucket}
	}
	sb := donut.storedBuckets.Get(bucket).(storedBucket)
	// Verify upload id
	if sb.multiPartSession[key].uploadID != uploadID {
		donut.lock.Unlock()
		return "", InvalidUploadID{UploadID: uploadID}
	}

	// get object key
	if _, ok := sb.partMetadata[partID]; ok {
		donut.lock.Unlock()
		return sb.partMetadata[partID].ETag, nil
	}

	hash := md5.New()
	var totalLength int64
	var err error
	for err == nil {
		byteBuffer := make([]byte, 1024*1024)
		var length int
		length, err = data.Read(byteBuffer)
		hash.Write(byteBuffer[0:length])
		donut.multiPartObjects[uploadID].Append(partID, byteBuffer[0:length])
		totalLength += int64(length)
	}
	if totalLength != size {
		donut.lock.Unlock()
		return "", fmt.Errorf("incomplete body for %s/%s", bucket, key)
	}

	md5Sum := hex.EncodeToString(hash.Sum(nil))
	sb.partMetadata[partID] = PartMetadata{PartNumber: partID, LastModified: time.Now().UTC(), ETag: md5Sum, Size: totalLength}
	session := sb.multiPartSession[key]
	session.totalParts++
	sb.multiPartSession[key] = session
	donut.storedBuckets.Set(bucket, sb)
	donut.lock.Unlock()
	return md5Sum, nil
}

// ListObjectParts - list parts from incomplete multipart session for a given object
func (donut API) ListObjectParts(bucket, key, uploadID string) ([]PartMetadata, error) {
	donut.lock.Lock()
	defer donut.lock.Unlock()
	if !donut.storedBuckets.Exists(bucket) {
		return nil, BucketNotFound{Bucket: bucket}
	}
	sb := donut.storedBuckets.Get(bucket).(storedBucket)
	if sb.multiPartSession[key].uploadID != uploadID {
		return nil, InvalidUploadID{UploadID: uploadID}
	}
	var parts []PartMetadata
	for i := 1; i <= sb.multiPartSession[key].totalParts; i++ {
		parts = append(parts, sb.partMetadata[i])
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].PartNumber < parts[j].PartNumber })
	return parts, nil
}

// CompleteMultipartUpload - complete a multipart upload and persist the data
func (donut API) CompleteMultipartUpload(bucket, key, uploadID string, partNumbers []int) (int64, error) {
	donut.lock.Lock()
	defer donut.lock.Unlock()
	var fullObject bytes.Buffer
	for _, partID := range partNumbers {
		object, ok := donut.multiPartObjects[uploadID].Get(partID)
		if !ok {
			return 0, fmt.Errorf("missing part: %d", partID)
		}
		fullObject.Write(object)
	}
	sb := donut.storedBuckets.Get(bucket).(storedBucket)
	delete(sb.multiPartSession, key)
	donut.storedBuckets.Set(bucket, sb)
	return int64(fullObject.Len()), nil
}

func TestB113miniopartretry(t *testing.T) {
	donut := New()
	donut.MakeBucket("photos")
	uploadID, err := donut.NewMultipartUpload("photos", "2015/july/beach.jpg")
	if err != nil {
		t.Fatal(err)
	}
	part := []byte("part-one-bytes")
	etag, err := donut.CreateObjectPart("photos", "2015/july/beach.jpg", uploadID, 1, "image/jpeg", int64(len(part)), bytes.NewReader(part))
	if err != nil {
		t.Fatal(err)
	}

	// The client timed out waiting for the response and retries part 1.
	retried, err := donut.CreateObjectPart("photos", "2015/july/beach.jpg", uploadID, 1, "image/jpeg", int64(len(part)), bytes.NewReader(part))
	if err != nil || retried != etag {
		t.Fatalf("retry: %v %q", err, retried)
	}

	done := make(chan int64)
	go func() {
		// mc lists the parts and completes the upload.
		parts, _ := donut.ListObjectParts("photos", "2015/july/beach.jpg", uploadID)
		size, _ := donut.CompleteMultipartUpload("photos", "2015/july/beach.jpg", uploadID, []int{parts[0].PartNumber})
		done <- size
	}()
	if size := <-done; size != int64(len(part)) {
		t.Fatalf("object size %d", size)
	}
}
