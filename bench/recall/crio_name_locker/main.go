// Modeled on the per-name lock helper used around container/sandbox name
// reservation (moby pkg/locker's predecessor, as also vendored by cri-o):
// LockKey created/looked up the per-name mutex and locked it while still
// holding the map lock, and UnlockKey needed the map lock to find the mutex.
// A second CreateContainer for the same name blocks on the name lock while
// holding l.mu, so the first caller can never UnlockKey. Fixed by the
// refcounted lockCtr design that drops l.mu before waiting.
package main

import (
	"fmt"
	"sync"
	"time"
)

type nameLocker struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (l *nameLocker) LockKey(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.locks[name]; !ok {
		l.locks[name] = &sync.Mutex{}
	}
	l.locks[name].Lock()
}

func (l *nameLocker) UnlockKey(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.locks[name].Unlock()
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
		ctrNameLock: &nameLocker{locks: map[string]*sync.Mutex{}},
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
