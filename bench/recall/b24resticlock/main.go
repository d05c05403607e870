// Project: restic/restic (internal/restic/lock.go)
// Bug: Lock.Refresh holds l.lock while it logs the lock with debug.Log("%v", l);
// Lock.String() takes l.lock to read the fields, so the refresh goroutine
// blocks on its own mutex and the lock is never refreshed or released.
// Fix: log only the lock ID (l.lockID.Str()) inside the critical section.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"
)

type ID [8]byte

func NewRandomID() ID {
	var id ID
	_, _ = rand.Read(id[:])
	return id
}

func (id ID) Str() string { return hex.EncodeToString(id[:4]) }

type FileType string

const LockFile FileType = "lock"

type Repository interface {
	SaveJSONUnpacked(ctx context.Context, t FileType, item interface{}) (ID, error)
	RemoveUnpacked(ctx context.Context, t FileType, id ID) error
}

type memRepo struct {
	mu    sync.Mutex
	files map[ID]string
}

func newMemRepo() *memRepo { return &memRepo{files: make(map[ID]string)} }

func (r *memRepo) SaveJSONUnpacked(_ context.Context, t FileType, item interface{}) (ID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := NewRandomID()
	r.files[id] = fmt.Sprintf("%s:%v", t, item)
	return id, nil
}

func (r *memRepo) RemoveUnpacked(_ context.Context, _ FileType, id ID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.files[id]; !ok {
		return errors.New("file not found")
	}
	delete(r.files, id)
	return nil
}

type Lock struct {
	lock      sync.Mutex
	Time      time.Time
	Exclusive bool
	Hostname  string
	Username  string
	PID       int
	UID       uint32
	GID       uint32

	repo   Repository
	lockID *ID
}

func debugLog(f string, args ...interface{}) {
	log.Printf("lock: "+f, args...)
}

func newLock(ctx context.Context, repo Repository, excl bool) (*Lock, error) {
	host, _ := os.Hostname()
	l := &Lock{
		Time:      time.Now(),
		PID:       os.Getpid(),
		Exclusive: excl,
		Hostname:  host,
		Username:  "backup",
		repo:      repo,
	}
	id, err := l.createLock(ctx)
	if err != nil {
		return nil, err
	}
	l.lockID = &id
	return l, nil
}

func NewLock(ctx context.Context, repo Repository) (*Lock, error) {
	return newLock(ctx, repo, false)
}

func NewExclusiveLock(ctx context.Context, repo Repository) (*Lock, error) {
	return newLock(ctx, repo, true)
}

func (l *Lock) createLock(ctx context.Context) (ID, error) {
	return l.repo.SaveJSONUnpacked(ctx, LockFile, l.Time)
}

func (l *Lock) Stale() bool {
	l.lock.Lock()
	defer l.lock.Unlock()
	return time.Since(l.Time) > 30*time.Minute
}

func (l *Lock) Refresh(ctx context.Context) error {
	l.lock.Lock()
	defer l.lock.Unlock()
	debugLog("refreshing lock %v", l)
	l.Time = time.Now()
	id, err := l.createLock(ctx)
	if err != nil {
		return err
	}
	oldID := *l.lockID
	l.lockID = &id
	return l.repo.RemoveUnpacked(ctx, LockFile, oldID)
}

func (l *Lock) Unlock(ctx context.Context) error {
	l.lock.Lock()
	defer l.lock.Unlock()
	if l.lockID == nil {
		return nil
	}
	return l.repo.RemoveUnpacked(ctx, LockFile, *l.lockID)
}

func (l *Lock) String() string {
	l.lock.Lock()
	defer l.lock.Unlock()
	kind := "shared"
	if l.Exclusive {
		kind = "exclusive"
	}
	return fmt.Sprintf("%s lock %s: PID %d on %s by %s (UID %d, GID %d), created at %s",
		kind, l.lockID.Str(), l.PID, l.Hostname, l.Username, l.UID, l.GID,
		l.Time.Format("2006-01-02 15:04:05"))
}

func refreshLocks(ctx context.Context, lock *Lock, interval time.Duration, done chan<- struct{}) {
	defer close(done)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for i := 0; i < 2; i++ {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if err := lock.Refresh(ctx); err != nil {
				log.Printf("unable to refresh lock: %v", err)
			}
		}
	}
}

func main() {
	ctx := context.Background()
	repo := newMemRepo()
	lock, err := NewExclusiveLock(ctx, repo)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("acquired", lock)
	done := make(chan struct{})
	go refreshLocks(ctx, lock, 20*time.Millisecond, done)
	<-done
	if err := lock.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("released lock, stale:", lock.Stale())
}
