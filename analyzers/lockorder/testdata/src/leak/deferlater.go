package leak

import (
	"errors"
	"sync"
)

// A lock taken on a branch whose unlock is deferred further down: a
// return between the two leaves it held (podman's removeContainer
// returning on a failed pod update with the pod locked).

type Pod struct {
	lock sync.Mutex
	n    int
}

var errUpdate = errors.New("update failed")

func (p *Pod) update() error {
	if p.n < 0 {
		return errUpdate
	}
	return nil
}

func removeFromPod(p *Pod, inPod bool) error {
	if inPod {
		p.lock.Lock()
		if err := p.update(); err != nil {
			return err // want `Pod.lock taken at deferlater.go:\d+ is still held on this return path \(other paths release it\) \[lock-leak\]`
		}
		defer p.lock.Unlock()
	}
	p.n++
	return nil
}

// The lock and its deferred unlock side by side on one branch: no return
// in between. Silent.
func removeChecked(p *Pod, inPod bool) error {
	if inPod {
		p.lock.Lock()
		defer p.lock.Unlock()
		if err := p.update(); err != nil {
			return err
		}
	}
	p.n++
	return nil
}

type Config struct {
	mutex sync.RWMutex
	key   []byte
}

// initKeyRLocked is called with the read lock held: it lets the caller's
// lock go, write-locks, and defers taking the read lock back (crypto/tls'
// initLegacySessionTicketKeyRLocked). Silent.
func (c *Config) initKeyRLocked() {
	if len(c.key) > 0 {
		return
	}
	c.mutex.RUnlock()
	defer c.mutex.RLock()
	c.mutex.Lock()
	defer c.mutex.Unlock()
	c.key = []byte("k")
}

func (c *Config) Key() []byte {
	c.mutex.RLock()
	defer c.mutex.RUnlock()
	c.initKeyRLocked()
	return c.key
}
