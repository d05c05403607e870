// FIXED TWIN of crio_name_locker: refcounted lockCtr as in moby pkg/locker;
// the map lock is never held while waiting for a name lock.
// Modeled on the per-name lock helper used around container name reservation
// (moby pkg/locker's predecessor, as vendored by cri-o).
package main

import (
	"fmt"
	"sync"
	"time"
)

type lockCtr struct {
	mu      sync.Mutex
	waiters int
}

type nameLocker struct {
	mu    sync.Mutex
	locks map[string]*lockCtr
}

func (l *nameLocker) LockKey(name string) {
	l.mu.Lock()
	nameLock, ok := l.locks[name]
	if !ok {
		nameLock = &lockCtr{}
		l.locks[name] = nameLock
	}
	nameLock.waiters++
	l.mu.Unlock() // drop the map lock before blocking on the name lock

	nameLock.mu.Lock()
	l.mu.Lock()
	nameLock.waiters--
	l.mu.Unlock()
}

func (l *nameLocker) UnlockKey(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	nameLock, ok := l.locks[name]
	if !ok {
		return
	}
	if nameLock.waiters == 0 {
		delete(l.locks, name)
	}
	nameLock.mu.Unlock()
}

type Server struct {
	ctrNameLock *nameLocker
	ctrIDs      map[string]string
	idMu        sync.Mutex
}

func (s *Server) CreateContainer(name, id string) error {
	s.ctrNameLock.LockKey(name)
	defer s.ctrNameLock.UnlockKey(name)
	s.idMu.Lock()
	defer s.idMu.Unlock()
	if _, ok := s.ctrIDs[name]; ok {
		return fmt.Errorf("name %q is reserved", name)
	}
	s.ctrIDs[name] = id
	return nil
}

func main() {
	s := &Server{
		ctrNameLock: &nameLocker{locks: map[string]*lockCtr{}},
		ctrIDs:      map[string]string{},
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_ = s.CreateContainer("k8s_nginx_default", fmt.Sprint("ctr-", i))
		}(i)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		fmt.Println("CreateContainer hung")
	}
}
