// Project: Caddy web server / reverse proxy (caddy.go, the server-type agnostic core), v0.9 beta
// Issue: mholt/caddy#941 "Deadlock in Stop function"
// Fixed twin of b34caddystopinstances, with the fix for #941: Stop takes instancesMu only to pick the first
// remaining instance, releases it, and calls inst.Stop() (which splices the instance out under instancesMu)
// without holding the lock, looping until the list is empty.
package main

import (
	"fmt"
	"log"
	"sync"
	"time"
)

var (
	// instances is the list of running Instances.
	instances []*Instance

	// instancesMu protects instances.
	instancesMu sync.Mutex
)

// GracefulServer is a Server and Stopper, the stopping
// of which is graceful (whatever that means for the kind
// of server being implemented).
type GracefulServer interface {
	Serve() error
	Stop() error
	Address() string
}

// Instance contains the state of servers created as a result of
// calling Start and can be used to access or control those servers.
type Instance struct {
	// serverType is the name of the instance's server type
	serverType string

	// wg is used to wait for all servers to shut down
	wg *sync.WaitGroup

	// servers is the list of servers with their listeners.
	servers []GracefulServer

	onShutdown []func() error
}

// httpServer is httpserver.Server: Stop waits for in-flight requests.
type httpServer struct {
	addr     string
	quit     chan struct{}
	inflight sync.WaitGroup
}

func (s *httpServer) Serve() error {
	<-s.quit
	return nil
}

func (s *httpServer) Stop() error {
	close(s.quit)
	done := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second): // timeouts.Stop
		return fmt.Errorf("%s: shutdown timed out", s.addr)
	}
	return nil
}

func (s *httpServer) Address() string { return s.addr }

// Stop stops all servers contained in i. It does NOT
// execute shutdown callbacks.
func (i *Instance) Stop() error {
	// stop the servers
	for _, s := range i.servers {
		if err := s.Stop(); err != nil {
			log.Printf("[ERROR] Stopping %s: %v", s.Address(), err)
		}
	}

	// splice i out of instance list, causing it to be garbage-collected
	instancesMu.Lock()
	for j, other := range instances {
		if other == i {
			instances = append(instances[:j], instances[j+1:]...)
			break
		}
	}
	instancesMu.Unlock()

	return nil
}

// Wait blocks until all of i's servers have stopped.
func (i *Instance) Wait() {
	i.wg.Wait()
}

// startServers starts all the servers in serverList.
func startServers(inst *Instance, serverList []GracefulServer) {
	for _, s := range serverList {
		inst.wg.Add(1)
		go func(s GracefulServer) {
			defer inst.wg.Done()
			if err := s.Serve(); err != nil {
				log.Println(err)
			}
		}(s)
		inst.servers = append(inst.servers, s)
	}
}

// Start starts Caddy with the given server type.
func Start(serverType string, addrs ...string) (*Instance, error) {
	inst := &Instance{serverType: serverType, wg: new(sync.WaitGroup)}
	var servers []GracefulServer
	for _, a := range addrs {
		servers = append(servers, &httpServer{addr: a, quit: make(chan struct{})})
	}
	startServers(inst, servers)

	instancesMu.Lock()
	instances = append(instances, inst)
	instancesMu.Unlock()
	return inst, nil
}

// Stop stops ALL servers. It blocks until they are all stopped.
// It does NOT execute shutdown callbacks, and it deletes all
// instances after stopping is completed. Do not re-use any
// references to old instances after calling Stop.
func Stop() error {
	// This awkward for loop is to avoid a deadlock since
	// inst.Stop() also acquires the instancesMu lock.
	for {
		instancesMu.Lock()
		if len(instances) == 0 {
			break
		}
		inst := instances[0]
		instancesMu.Unlock()
		if err := inst.Stop(); err != nil {
			log.Printf("[ERROR] Stopping %s: %v", inst.serverType, err)
		}
	}
	instancesMu.Unlock()

	return nil
}

func main() {
	inst, err := Start("http", "localhost:2015", "localhost:2016")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("started", len(inst.servers), "servers")
	fmt.Println("About to stop...")
	if err := Stop(); err != nil {
		log.Fatal(err)
	}
	inst.Wait()
	fmt.Println("Stopped")
}
