// Project: caddy (usagepool.go)
// Bug: UsagePool.LoadOrNew write-locks a placeholder entry and runs the constructor; on
//   failure it takes the pool lock to delete the entry while STILL holding the entry lock.
//   UsagePool.Range locks the pool, then each entry: lock-order inversion up <-> upv.
// Upstream fix: release the entry lock before taking the pool lock on failure (caddy #7968)

package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Destructor is a value that can clean itself up when it is deallocated.
type Destructor interface {
	Destruct() error
}

// Constructor is a function that returns a new value that can destruct itself when it is no longer needed.
type Constructor func() (Destructor, error)

// UsagePool is a thread-safe map that pools values based on usage (reference counting).
type UsagePool struct {
	sync.RWMutex
	pool map[any]*usagePoolVal
}

type usagePoolVal struct {
	refs  int32 // accessed atomically; must be 64-bit aligned for 32-bit systems
	value any
	err   error
	sync.RWMutex
}

// NewUsagePool returns a new usage pool that is ready to use.
func NewUsagePool() *UsagePool {
	return &UsagePool{pool: make(map[any]*usagePoolVal)}
}

// LoadOrNew loads the value associated with key from the pool if it already exists,
// otherwise it calls construct to create a new value and stores it.
func (up *UsagePool) LoadOrNew(key any, construct Constructor) (value any, loaded bool, err error) {
	var upv *usagePoolVal
	up.Lock()
	upv, loaded = up.pool[key]
	if loaded {
		atomic.AddInt32(&upv.refs, 1)
		up.Unlock()
		upv.RLock()
		value = upv.value
		err = upv.err
		upv.RUnlock()
	} else {
		upv = &usagePoolVal{refs: 1}
		upv.Lock()
		up.pool[key] = upv
		up.Unlock()
		value, err = construct()
		if err == nil {
			upv.value = value
		} else {
			upv.err = err
			up.Lock()
			// this *should* be safe, I think, because we have a
			// write lock on upv...
			delete(up.pool, key)
			up.Unlock()
		}
		upv.Unlock()
	}
	return
}

// Range iterates the pool similarly to sync.Map.Range() in the order it was
// stored. Values which errored during construction are skipped.
func (up *UsagePool) Range(f func(key, value any) bool) {
	up.RLock()
	defer up.RUnlock()
	for key, upv := range up.pool {
		upv.RLock()
		if upv.err != nil {
			upv.RUnlock()
			continue
		}
		val := upv.value
		upv.RUnlock()
		if !f(key, val) {
			break
		}
	}
}

// ---- a module using the pool (shared listeners) ----

type sharedListener struct {
	key  string
	port int
}

func (sl *sharedListener) Destruct() error { return nil }

var listenerPool = NewUsagePool()

var errAddrInUse = errors.New("bind: address already in use")

func listenerKey(network, addr string) string { return network + "/" + addr }

func listenReusable(network, addr string) (any, error) {
	lnKey := listenerKey(network, addr)
	sharedLn, _, err := listenerPool.LoadOrNew(lnKey, func() (Destructor, error) {
		time.Sleep(time.Millisecond) // binding takes a moment
		if addr == ":80" {
			return nil, errAddrInUse
		}
		return &sharedListener{key: lnKey, port: 443}, nil
	})
	if err != nil {
		return nil, err
	}
	return sharedLn, nil
}

// listenerMetrics is what the admin endpoint periodically runs.
func listenerMetrics() int {
	n := 0
	listenerPool.Range(func(key, value any) bool {
		n++
		return true
	})
	return n
}

func main() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			_, err := listenReusable("tcp", ":80")
			if err != nil && i == 0 {
				fmt.Println("listen:", err)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 5000; i++ {
			listenerMetrics()
		}
	}()
	wg.Wait()
	fmt.Println("listeners:", listenerMetrics())
}
