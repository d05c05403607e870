package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type NodeID string

type Node struct{ ID NodeID }

type conn struct {
	id   NodeID
	cont chan error
}

type Server struct {
	lock    sync.Mutex
	running bool
	self    NodeID

	quit    chan struct{}
	addpeer chan *conn
	loopWG  sync.WaitGroup
}

var errDiscSelf = errors.New("connected to self")

func (srv *Server) Start() {
	srv.lock.Lock()
	defer srv.lock.Unlock()
	srv.running = true
	srv.quit = make(chan struct{})
	srv.addpeer = make(chan *conn)
	srv.loopWG.Add(1)
	go srv.run()
}

func (srv *Server) Self() *Node {
	srv.lock.Lock()
	defer srv.lock.Unlock()
	if !srv.running {
		return &Node{ID: "0.0.0.0"}
	}
	return &Node{ID: srv.self}
}

func (srv *Server) encHandshakeChecks(peers map[NodeID]bool, c *conn) error {
	switch {
	case peers[c.id]:
		return errors.New("already connected")
	case c.id == srv.Self().ID:
		return errDiscSelf
	}
	return nil
}

func (srv *Server) run() {
	defer srv.loopWG.Done()
	peers := make(map[NodeID]bool)
	for {
		select {
		case <-srv.quit:
			return
		case c := <-srv.addpeer:
			time.Sleep(20 * time.Millisecond) // handshake work
			err := srv.encHandshakeChecks(peers, c)
			if err == nil {
				peers[c.id] = true
			}
			c.cont <- err
		}
	}
}

func (srv *Server) Stop() {
	srv.lock.Lock()
	if !srv.running {
		srv.lock.Unlock()
		return
	}
	srv.running = false
	close(srv.quit)
	srv.lock.Unlock()
	srv.loopWG.Wait()
}

func main() {
	srv := &Server{self: "enode-a"}
	srv.Start()

	c := &conn{id: "enode-b", cont: make(chan error, 1)}
	srv.addpeer <- c
	go func() { fmt.Println("checkpoint:", <-c.cont) }()

	srv.Stop()
	fmt.Println("server stopped")
}
