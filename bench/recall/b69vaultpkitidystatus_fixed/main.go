// Command b69vaultpkitidystatus reproduces a read-lock recursion deadlock in
// the PKI secrets engine of HashiCorp Vault.
//
// Project: hashicorp/vault, builtin/logical/pki/path_tidy.go. Bug introduced
// by PR #28488 ("PKI: Track last time auto tidy was run across restarts") and
// fixed by PR #28556 ("Do not acquire a read lock twice on tidyStatusLock
// during tidy-status").
//
// pathTidyStatusRead takes b.tidyStatusLock.RLock for the whole request and,
// while building the response, calls b.getLastAutoTidyTime, which takes
// b.tidyStatusLock.RLock a second time. When a tidy operation starts between
// the two read locks, tidyStatusStart calls b.tidyStatusLock.Lock and queues
// as a writer; the second RLock then waits behind the writer and the writer
// waits for the first RLock, so the tidy-status request and the tidy worker
// hang forever. Here the window is opened by the certificate counter, which
// is still counting the stored certificates when the status is read (the
// exact order of the response fields is reconstructed).
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type tidyStatusState int

const (
	tidyStatusInactive tidyStatusState = iota
	tidyStatusStarted
	tidyStatusFinished
)

type tidyConfig struct {
	CertStore    bool
	SafetyBuffer time.Duration
}

type tidyStatus struct {
	safetyBuffer          int
	tidyCertStore         bool
	state                 tidyStatusState
	timeStarted           time.Time
	timeFinished          time.Time
	certStoreDeletedCount uint
}

type CertificateCounter struct {
	countLock sync.Mutex
	enabled   bool
	certCount uint32
}

func (c *CertificateCounter) IsEnabled() bool { return c.enabled }

func (c *CertificateCounter) CertificateCount() uint32 {
	c.countLock.Lock()
	defer c.countLock.Unlock()
	return c.certCount
}

func (c *CertificateCounter) initializeCountsFromStorage(certs []string, listed chan<- struct{}) {
	c.countLock.Lock()
	defer c.countLock.Unlock()
	close(listed)
	time.Sleep(60 * time.Millisecond) // LIST certs/ against the physical storage
	c.certCount = uint32(len(certs))
}

type backend struct {
	tidyStatusLock sync.RWMutex
	tidyStatus     *tidyStatus
	lastAutoTidy   time.Time
	tidyCASGuard   *uint32
	certCounter    *CertificateCounter
	certs          []string
	backendUUID    string
}

func (b *backend) GetCertificateCounter() *CertificateCounter { return b.certCounter }

func (b *backend) getLastAutoTidyTime() time.Time {
	b.tidyStatusLock.RLock()
	defer b.tidyStatusLock.RUnlock()
	return b.getLastAutoTidyTimeWithoutLock()
}

func (b *backend) getLastAutoTidyTimeWithoutLock() time.Time { return b.lastAutoTidy }

func (b *backend) pathTidyStatusRead() map[string]interface{} {
	b.tidyStatusLock.RLock()
	defer b.tidyStatusLock.RUnlock()

	data := map[string]interface{}{
		"safety_buffer":            nil,
		"tidy_cert_store":          nil,
		"state":                    "Inactive",
		"cert_store_deleted_count": nil,
		"current_cert_store_count": nil,
		"internal_backend_uuid":    b.backendUUID,
	}
	certCounter := b.GetCertificateCounter()
	if certCounter.IsEnabled() {
		data["current_cert_store_count"] = certCounter.CertificateCount()
	}
	data["last_auto_tidy_finished"] = b.getLastAutoTidyTimeWithoutLock() // we acquired the tidyStatusLock above.

	if b.tidyStatus.state == tidyStatusInactive {
		return data
	}
	data["safety_buffer"] = b.tidyStatus.safetyBuffer
	data["tidy_cert_store"] = b.tidyStatus.tidyCertStore
	data["cert_store_deleted_count"] = b.tidyStatus.certStoreDeletedCount
	switch b.tidyStatus.state {
	case tidyStatusStarted:
		data["state"] = "Running"
	case tidyStatusFinished:
		data["state"] = "Finished"
	}
	return data
}

func (b *backend) tidyStatusStart(config *tidyConfig) {
	b.tidyStatusLock.Lock()
	defer b.tidyStatusLock.Unlock()
	b.tidyStatus = &tidyStatus{
		safetyBuffer:  int(config.SafetyBuffer / time.Second),
		tidyCertStore: config.CertStore,
		state:         tidyStatusStarted,
		timeStarted:   time.Now(),
	}
}

func (b *backend) tidyStatusStop() {
	b.tidyStatusLock.Lock()
	defer b.tidyStatusLock.Unlock()
	b.tidyStatus.timeFinished = time.Now()
	b.tidyStatus.state = tidyStatusFinished
}

func (b *backend) tidyStatusIncCertStoreCount() {
	b.tidyStatusLock.Lock()
	defer b.tidyStatusLock.Unlock()
	b.tidyStatus.certStoreDeletedCount++
}

func (b *backend) doTidyCertStore(config *tidyConfig) {
	for range b.certs {
		b.tidyStatusIncCertStoreCount()
	}
}

func (b *backend) startTidyOperation(config *tidyConfig) {
	go func() {
		defer atomic.StoreUint32(b.tidyCASGuard, 0)
		b.tidyStatusStart(config)
		if config.CertStore {
			b.doTidyCertStore(config)
		}
		b.tidyStatusStop()
	}()
}

func (b *backend) pathTidyWrite(config *tidyConfig) error {
	if !atomic.CompareAndSwapUint32(b.tidyCASGuard, 0, 1) {
		return fmt.Errorf("tidy operation already in progress")
	}
	b.startTidyOperation(config)
	return nil
}

func main() {
	b := &backend{
		tidyStatus:   &tidyStatus{state: tidyStatusInactive},
		tidyCASGuard: new(uint32),
		certCounter:  &CertificateCounter{enabled: true},
		certs:        []string{"17:3a:01", "17:3a:02", "17:3a:03"},
		backendUUID:  "5c1d6a0e-pki",
	}

	listed := make(chan struct{})
	go b.certCounter.initializeCountsFromStorage(b.certs, listed)
	<-listed

	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = b.pathTidyWrite(&tidyConfig{CertStore: true, SafetyBuffer: 72 * time.Hour})
	}()

	for {
		status := b.pathTidyStatusRead()
		fmt.Println("tidy-status:", status["state"], "deleted:", status["cert_store_deleted_count"])
		if status["state"] == "Finished" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
