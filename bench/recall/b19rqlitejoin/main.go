// Project: rqlite/rqlite (store/store.go)
// Bug: Store.Join took s.metaMu and then checked whether the joining node was
// already known with s.nodeExists(id, true); the constant `true` tells the
// helper to take s.metaMu.RLock itself, which blocks forever because the same
// goroutine already holds the write lock (self-deadlock selected by a
// constant bool argument).
// Fix: call s.nodeExists(id, false) from Join, where the lock is already held.

package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrNotLeader = errors.New("not leader")

type Server struct {
	ID       string
	Addr     string
	Suffrage string
}

type Store struct {
	raftID   string
	raftAddr string
	leader   bool

	metaMu sync.RWMutex
	meta   map[string]map[string]string

	serversMu sync.Mutex
	servers   []Server

	joinTimeout time.Duration
	numJoins    int
}

func New(id, addr string) *Store {
	return &Store{raftID: id, raftAddr: addr, leader: true,
		meta: map[string]map[string]string{}, joinTimeout: 5 * time.Second}
}

// nodeExists reports whether metadata is present for id. If lock is true the
// metadata lock is acquired for the check.
func (s *Store) nodeExists(id string, lock bool) bool {
	if lock {
		s.metaMu.RLock()
		defer s.metaMu.RUnlock()
	}
	_, ok := s.meta[id]
	return ok
}

func (s *Store) Metadata(id, key string) string {
	s.metaMu.RLock()
	defer s.metaMu.RUnlock()
	if md, ok := s.meta[id]; ok {
		return md[key]
	}
	return ""
}

func (s *Store) addVoter(id, addr string) error {
	s.serversMu.Lock()
	defer s.serversMu.Unlock()
	for _, srv := range s.servers {
		if srv.ID == id && srv.Addr == addr {
			return nil
		}
	}
	s.servers = append(s.servers, Server{ID: id, Addr: addr, Suffrage: "Voter"})
	return nil
}

// Join joins a node, identified by id and located at addr, to this store.
func (s *Store) Join(id, addr string, metadata map[string]string) error {
	if !s.leader {
		return ErrNotLeader
	}
	s.metaMu.Lock()
	defer s.metaMu.Unlock()

	if s.nodeExists(id, true) && s.meta[id]["api_addr"] == metadata["api_addr"] {
		// Already a member with identical metadata, nothing to do.
		return nil
	}
	if err := s.addVoter(id, addr); err != nil {
		return err
	}
	s.meta[id] = metadata
	s.numJoins++
	return nil
}

func main() {
	s := New("node1", "localhost:4002")
	s.meta["node1"] = map[string]string{"api_addr": "http://localhost:4001"}

	errCh := make(chan error)
	go func() { // HTTP /join handler
		errCh <- s.Join("node2", "localhost:4004",
			map[string]string{"api_addr": "http://localhost:4003"})
	}()
	if err := <-errCh; err != nil {
		fmt.Println("join:", err)
		return
	}
	fmt.Println("node2 api:", s.Metadata("node2", "api_addr"))
}
