// Fixed twin: shape of minio PR #635 ("Fix a deadlock in trove when evicting objects when
// we reach the maxSize used"), 2015.
//
// The in-memory object cache embeds a sync.Mutex. Set locks it and, when the
// new value would push the cache over maxSize, evicts random keys by calling
// the exported Delete, which locks the cache again. The first upload that
// needs an eviction hangs the uploading request, and every later Get and the
// expiry ticker queue on the same mutex.
package main

import (
	"fmt"
	"sync"
	"time"
)

var noExpiration = time.Duration(0)

// Cache holds the objects of the memory driver.
type Cache struct {
	// Mutex is used for handling the concurrent read/write requests.
	sync.Mutex

	items        map[string][]byte
	updatedAt    map[string]time.Time
	expiration   time.Duration
	maxSize      uint64
	currentSize  uint64
	OnExpired    func(a ...interface{})
	totalExpired uint64
}

func NewCache(maxSize uint64, expiration time.Duration) *Cache {
	return &Cache{items: map[string][]byte{}, updatedAt: map[string]time.Time{},
		expiration: expiration, maxSize: maxSize}
}

// ExpireObjects expires objects in a goroutine.
func (r *Cache) ExpireObjects(gcInterval time.Duration) {
	go func() {
		for range time.Tick(gcInterval) {
			r.Expire()
		}
	}()
}

func (r *Cache) Get(key string) ([]byte, bool) {
	r.Lock()
	defer r.Unlock()
	value, ok := r.items[key]
	if ok {
		r.updatedAt[key] = time.Now()
	}
	return value, ok
}

// Set will persist a value to the cache.
func (r *Cache) Set(key string, value []byte) bool {
	r.Lock()
	defer r.Unlock()
	valueLen := uint64(len(value))
	if r.maxSize > 0 {
		if valueLen > r.maxSize {
			return false
		}
		// remove random key if only we reach the maxSize threshold
		for (r.currentSize + valueLen) > r.maxSize {
			for randomKey := range r.items {
				r.doDelete(randomKey) // lock already held
				break
			}
		}
	}
	r.items[key] = value
	r.currentSize += valueLen
	r.updatedAt[key] = time.Now()
	return true
}

// Expire expires keys which have expired.
func (r *Cache) Expire() {
	r.Lock()
	defer r.Unlock()
	for key := range r.items {
		if r.expiration != noExpiration && time.Since(r.updatedAt[key]) > r.expiration {
			r.doDelete(key)
		}
	}
}

// Delete deletes a given key if it exists.
func (r *Cache) Delete(key string) {
	r.Lock()
	defer r.Unlock()
	r.doDelete(key)
}

func (r *Cache) doDelete(key string) {
	if _, ok := r.items[key]; ok {
		r.currentSize -= uint64(len(r.items[key]))
		delete(r.items, key)
		delete(r.updatedAt, key)
		r.totalExpired++
		if r.OnExpired != nil {
			r.OnExpired(key)
		}
	}
}

type memoryDriver struct {
	lock          sync.RWMutex
	storedBuckets map[string]map[string]int // bucket -> object -> size
	objects       *Cache
}

func (memory *memoryDriver) CreateObject(bucket, key string, data []byte) error {
	memory.lock.Lock()
	if _, ok := memory.storedBuckets[bucket]; !ok {
		memory.lock.Unlock()
		return fmt.Errorf("bucket %s not found", bucket)
	}
	memory.storedBuckets[bucket][key] = len(data)
	memory.lock.Unlock()
	if !memory.objects.Set(bucket+"/"+key, data) {
		return fmt.Errorf("object %s too large", key)
	}
	return nil
}

func (memory *memoryDriver) GetObject(bucket, key string) ([]byte, error) {
	data, ok := memory.objects.Get(bucket + "/" + key)
	if !ok {
		return nil, fmt.Errorf("object %s/%s not found", bucket, key)
	}
	return data, nil
}

func (memory *memoryDriver) expiredObject(a ...interface{}) {
	fmt.Println("evicted", a[0])
}

func main() {
	memory := &memoryDriver{storedBuckets: map[string]map[string]int{"photos": {}},
		objects: NewCache(1024, time.Hour)}
	memory.objects.OnExpired = memory.expiredObject
	memory.objects.ExpireObjects(10 * time.Millisecond)

	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func(i int) { // PUT requests, one after another
			defer wg.Done()
			time.Sleep(time.Duration(i) * 5 * time.Millisecond)
			err := memory.CreateObject("photos", fmt.Sprintf("img%d.jpg", i), make([]byte, 400))
			fmt.Println("put", i, err)
		}(i)
	}
	wg.Wait()
	_, err := memory.GetObject("photos", "img2.jpg")
	fmt.Println("get img2.jpg:", err)
}
