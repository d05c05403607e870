// Like hashicorp consul agent local state: a generic SyncMap[K, V] is
// instantiated for services and for checks. Updating a service reads the
// checks map inside services.Update - two distinct instances (and locks),
// and the checks side never touches services while locked. Range calls
// back into the same map after the snapshot lock is released.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/agentstate/cmap"
)

type Service struct {
	ID      string
	Healthy bool
	Syncs   int
}

type Check struct {
	ServiceID string
	Passing   bool
}

type State struct {
	services *cmap.SyncMap[string, Service]
	checks   *cmap.SyncMap[string, Check]
}

func (s *State) syncService(id string) {
	s.services.Update(id, func(old Service, ok bool) Service {
		c, found := s.checks.Load("check:" + id) // other instance's lock
		old.ID = id
		old.Healthy = !found || c.Passing
		old.Syncs++
		return old
	})
}

func (s *State) pruneUnhealthy() int {
	n := 0
	s.services.Range(func(id string, svc Service) bool {
		if !svc.Healthy {
			s.services.Delete(id) // lock already released by Range
			n++
		}
		return true
	})
	return n
}

func main() {
	st := &State{services: cmap.New[string, Service](), checks: cmap.New[string, Check]()}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				id := fmt.Sprintf("web-%d", i%8)
				st.checks.Store("check:"+id, Check{ServiceID: id, Passing: (i+w)%3 != 0})
			}
		}(w)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				st.syncService(fmt.Sprintf("web-%d", i%8))
			}
		}()
	}
	wg.Wait()
	pruned := st.pruneUnhealthy()
	left := 0
	st.services.Range(func(string, Service) bool { left++; return true })
	fmt.Println("pruned:", pruned, "left:", left)
}
