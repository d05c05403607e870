// Project: hashicorp/vault (ExpirationManager), as remembered.
// Bug: Stop() (called on seal / step-down) took pendingLock, cancelled all
// pending lease timers and then waited for in-flight expirations to finish
// while still holding pendingLock. An expiration goroutine that had already
// fired calls revokeEntry -> pendingLock.Lock() and never finishes, so
// wg.Wait() never returns: blocking wait under a lock the waited-on side needs.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type pendingInfo struct {
	cancel context.CancelFunc
	expire time.Time
}

type ExpirationManager struct {
	pendingLock sync.RWMutex
	pending     map[string]*pendingInfo
	inflight    sync.WaitGroup
	revoked     []string
}

func NewExpirationManager() *ExpirationManager {
	return &ExpirationManager{pending: make(map[string]*pendingInfo)}
}

// Register tracks a lease and starts its expiration goroutine.
func (m *ExpirationManager) Register(leaseID string, ttl time.Duration) {
	m.pendingLock.Lock()
	defer m.pendingLock.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), ttl+time.Second)
	m.pending[leaseID] = &pendingInfo{cancel: cancel, expire: time.Now().Add(ttl)}
	m.inflight.Add(1)
	go m.expireAfter(ctx, leaseID, ttl)
}

func (m *ExpirationManager) expireAfter(ctx context.Context, leaseID string, ttl time.Duration) {
	defer m.inflight.Done()
	t := time.NewTimer(ttl)
	defer t.Stop()
	select {
	case <-t.C:
		m.expireID(leaseID)
	case <-ctx.Done():
	}
}

func (m *ExpirationManager) expireID(leaseID string) {
	// ... revoke against the backend, then drop bookkeeping.
	m.revokeEntry(leaseID)
}

func (m *ExpirationManager) revokeEntry(leaseID string) {
	m.pendingLock.Lock()
	defer m.pendingLock.Unlock()
	if p, ok := m.pending[leaseID]; ok {
		p.cancel()
		delete(m.pending, leaseID)
	}
	m.revoked = append(m.revoked, leaseID)
}

// Stop is invoked on seal: cancel every pending lease and drain in-flight work.
func (m *ExpirationManager) Stop() {
	m.pendingLock.Lock()
	defer m.pendingLock.Unlock()
	for id, p := range m.pending {
		p.cancel()
		delete(m.pending, id)
	}
	m.inflight.Wait()
}

func main() {
	m := NewExpirationManager()
	for i := 0; i < 50; i++ {
		m.Register(fmt.Sprintf("auth/token/create/%d", i), time.Duration(i)*time.Millisecond)
	}
	go m.Stop()
	time.Sleep(time.Second)
}
