// Project: Caddy v2, caddy.UsagePool (usagepool.go) used by the listener pool.
// Bug: approximate (v2 beta era): UsagePool.Delete called the value's Destructor.Destruct() while
// still holding the pool's lock; a pooled value whose Destruct releases a nested pooled resource
// (a QUIC/HTTP3 listener releasing its shared UDP packet conn, pooled in the same listenerPool)
// re-enters Delete -> up.Lock() on the same goroutine; config loads then block behind it.
// Fix: remove the entry and unlock the pool before calling Destruct (as usagepool.go does today).
package caddypool_fixed

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type Constructor func() (Destructor, error)

type Destructor interface {
	Destruct() error
}

type usagePoolVal struct {
	refs  int32
	value any
	err   error
	sync.RWMutex
}

type UsagePool struct {
	sync.RWMutex
	pool map[any]*usagePoolVal
}

func NewUsagePool() *UsagePool { return &UsagePool{pool: make(map[any]*usagePoolVal)} }

// LoadOrNew loads the value associated with key, or constructs it (without holding the pool lock).
func (up *UsagePool) LoadOrNew(key any, construct Constructor) (value any, loaded bool, err error) {
	up.Lock()
	upv, loaded := up.pool[key]
	if loaded {
		atomic.AddInt32(&upv.refs, 1)
		up.Unlock()
		upv.RLock()
		value, err = upv.value, upv.err
		upv.RUnlock()
		return value, loaded, err
	}
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
		delete(up.pool, key)
		up.Unlock()
	}
	upv.Unlock()
	return value, false, err
}

// Delete decrements the usage count for key and, at zero, removes and destructs the value.
func (up *UsagePool) Delete(key any) (deleted bool, err error) {
	up.Lock()
	upv, ok := up.pool[key]
	if !ok {
		up.Unlock()
		return false, nil
	}
	refs := atomic.AddInt32(&upv.refs, -1)
	if refs == 0 {
		delete(up.pool, key)
		up.Unlock()
		upv.RLock()
		val := upv.value
		upv.RUnlock()
		if d, ok := val.(Destructor); ok {
			err = d.Destruct()
		}
		deleted = true
	} else if refs < 0 {
		up.Unlock()
		panic(fmt.Sprintf("deleted more than stored: %#v (usage: %d)", upv.value, refs))
	} else {
		up.Unlock()
	}
	return deleted, err
}

func (up *UsagePool) References(key any) (int, bool) {
	up.RLock()
	defer up.RUnlock()
	upv, ok := up.pool[key]
	if !ok {
		return 0, false
	}
	return int(atomic.LoadInt32(&upv.refs)), true
}

var listenerPool = NewUsagePool()

type sharedPacketConn struct {
	key    string
	closed atomic.Bool
}

func (pc *sharedPacketConn) Destruct() error { pc.closed.Store(true); return nil }

type sharedQuicListener struct {
	key           string
	packetConnKey string
}

// Destruct closes the QUIC listener and releases the underlying shared packet conn.
func (sql *sharedQuicListener) Destruct() error {
	_, err := listenerPool.Delete(sql.packetConnKey)
	return err
}

func ListenQUIC(addr string) (*sharedQuicListener, error) {
	pcKey := "udp/" + addr
	lnKey := "quic/" + addr
	ln, _, err := listenerPool.LoadOrNew(lnKey, func() (Destructor, error) {
		if _, _, err := listenerPool.LoadOrNew(pcKey, func() (Destructor, error) {
			return &sharedPacketConn{key: pcKey}, nil
		}); err != nil {
			return nil, err
		}
		return &sharedQuicListener{key: lnKey, packetConnKey: pcKey}, nil
	})
	if err != nil {
		return nil, err
	}
	return ln.(*sharedQuicListener), nil
}

func TestUsagePoolDestructDeadlock(t *testing.T) {
	old, err := ListenQUIC(":443")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // config unload: stop the old HTTP/3 server
		defer wg.Done()
		if _, err := listenerPool.Delete(old.key); err != nil {
			t.Errorf("delete: %v", err)
		}
	}()
	go func() { // new config load: HTTP/3 on another port
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		if _, err := ListenQUIC(":8443"); err != nil {
			t.Errorf("listen: %v", err)
		}
		if n, ok := listenerPool.References("udp/:443"); ok {
			t.Errorf("old packet conn still referenced %d times", n)
		}
	}()
	wg.Wait()
}
