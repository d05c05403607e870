// Modelled on etcd's EtcdServer apply pipeline: the proposer assigns an
// index and pushes the entry onto applyc (capacity from
// ServerConfig.MaxInflightApplies) while holding s.mu, so indices reach the
// applier in order. Like etcd's "too many requests" check on the gap
// between committed and applied index, a proposal is only sent when fewer
// than cap(applyc) entries are unapplied, so the send under s.mu can never
// block. The applier receives first and only then takes s.mu.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrTooManyRequests = errors.New("etcdserver: too many requests")

type ServerConfig struct {
	MaxInflightApplies int
}

type entry struct {
	index uint64
	key   string
	val   int
}

type EtcdServer struct {
	mu           sync.RWMutex
	proposeIndex uint64
	appliedIndex uint64
	kv           map[string]int

	applyc chan entry
	done   chan struct{}
}

func NewServer(cfg ServerConfig) *EtcdServer {
	s := &EtcdServer{
		kv:     make(map[string]int),
		applyc: make(chan entry, cfg.MaxInflightApplies),
		done:   make(chan struct{}),
	}
	go s.applyAll()
	return s
}

func (s *EtcdServer) Put(key string, val int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Entries in applyc <= proposeIndex-appliedIndex < cap(applyc): the send
	// below always finds a free slot.
	if s.proposeIndex-s.appliedIndex >= uint64(cap(s.applyc)) {
		return ErrTooManyRequests
	}
	s.proposeIndex++
	s.applyc <- entry{index: s.proposeIndex, key: key, val: val}
	return nil
}

func (s *EtcdServer) applyAll() {
	defer close(s.done)
	for e := range s.applyc { // receive without any lock
		s.mu.Lock() // lock only after receiving
		if e.index != s.appliedIndex+1 {
			panic(fmt.Sprintf("out of order apply %d after %d", e.index, s.appliedIndex))
		}
		s.kv[e.key] += e.val
		s.appliedIndex = e.index
		s.mu.Unlock()
	}
}

func (s *EtcdServer) Range(prefix string) (sum int, applied uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k, v := range s.kv {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			sum += v
		}
	}
	return sum, s.appliedIndex
}

func (s *EtcdServer) Stop() {
	s.mu.Lock()
	close(s.applyc) // no Put can be mid-send: sends happen only under s.mu
	s.mu.Unlock()
	<-s.done
}

func main() {
	s := NewServer(ServerConfig{MaxInflightApplies: 2})
	var wg sync.WaitGroup
	for c := 0; c < 6; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				for s.Put(fmt.Sprintf("/registry/pods/%d", i%5), 1) != nil {
					time.Sleep(20 * time.Microsecond) // back off without the lock
				}
				if i%20 == 0 {
					s.Range("/registry/")
				}
			}
		}(c)
	}
	wg.Wait()
	s.Stop()
	sum, applied := s.Range("/registry/")
	fmt.Printf("sum=%d applied=%d\n", sum, applied)
}
