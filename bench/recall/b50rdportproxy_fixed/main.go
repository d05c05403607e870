// Project: rancher-sandbox/rancher-desktop, the Windows privileged service
// (src/go/privileged-service), Rancher Desktop 1.8/1.9 dev, April 2023.
// Files: src/go/privileged-service/pkg/port/portproxy.go (proxy.exec, add, delete, removeAll,
// execNetshAdd, execNetshDelete) and pkg/port/server.go (Server.handleEvent, Server.Stop).
// Issue rancher-sandbox/rancher-desktop#4571, fixed by PR #4570 "Prevent mutex deadlock".
//
// The privileged service keeps the netsh portproxy rules it created in proxy.portMappings, guarded
// by proxy.mutex. delete runs "netsh interface portproxy delete" for one mapping and then locks the
// mutex to drop it from the map. When the service stops, Server.Stop calls removeAll, which locked
// the mutex to walk the map and called delete for every mapping; delete's Lock on the same
// sync.Mutex never returns and the service becomes unresponsive (the PR: "the removeAll function
// was acquiring the mutex lock and while holding on to the lock it would call delete function which
// also required the mutex lock"). The fix makes removeAll run execNetshDelete itself for each
// mapping under its single lock and reset the map.
//
// This is the fixed version: removeAll no longer calls delete.
package main

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
)

type PortMapping struct {
	Remove      bool
	ListenIP    string
	ListenPort  int
	ConnectIP   string
	ConnectPort int
}

func (pm PortMapping) hash() string {
	return pm.ListenIP + ":" + strconv.Itoa(pm.ListenPort)
}

// commandRunner stands in for exec.Command("netsh", args...).Run().
type commandRunner func(name string, args ...string) error

var runCommand commandRunner = func(name string, args ...string) error {
	fmt.Println("exec:", name, args)
	return nil
}

func execNetshAdd(pm PortMapping) error {
	return runCommand("netsh", "interface", "portproxy", "add", "v4tov4",
		"listenport="+strconv.Itoa(pm.ListenPort), "listenaddress="+pm.ListenIP,
		"connectport="+strconv.Itoa(pm.ConnectPort), "connectaddress="+pm.ConnectIP)
}

func execNetshDelete(pm PortMapping) error {
	return runCommand("netsh", "interface", "portproxy", "delete", "v4tov4",
		"listenport="+strconv.Itoa(pm.ListenPort), "listenaddress="+pm.ListenIP)
}

type proxy struct {
	mutex        sync.Mutex
	portMappings map[string]PortMapping
}

func newProxy() *proxy {
	return &proxy{portMappings: make(map[string]PortMapping)}
}

func (p *proxy) exec(pm PortMapping) error {
	if pm.Remove {
		return p.delete(pm)
	}
	return p.add(pm)
}

func (p *proxy) add(pm PortMapping) error {
	if err := execNetshAdd(pm); err != nil {
		return err
	}
	p.mutex.Lock()
	defer p.mutex.Unlock()
	p.portMappings[pm.hash()] = pm
	return nil
}

func (p *proxy) delete(pm PortMapping) error {
	if err := execNetshDelete(pm); err != nil {
		return fmt.Errorf("deleting portproxy: %+v failed: %w", pm, err)
	}
	p.mutex.Lock()
	defer p.mutex.Unlock()
	delete(p.portMappings, pm.hash())
	return nil
}

func (p *proxy) removeAll() error {
	errs := make([]error, 0)
	p.mutex.Lock()
	defer p.mutex.Unlock()
	for _, pm := range p.portMappings {
		if err := execNetshDelete(pm); err != nil {
			errs = append(errs, fmt.Errorf("deleting portproxy: %+v failed: %w", pm, err))
		}
	}
	p.portMappings = make(map[string]PortMapping)
	return errors.Join(errs...)
}

type Server struct {
	proxy  *proxy
	events chan PortMapping
	quit   chan struct{}
}

func (s *Server) handleEvent(pm PortMapping) {
	if err := s.proxy.exec(pm); err != nil {
		fmt.Println("port proxy event failed:", err)
	}
}

func (s *Server) Stop() error {
	close(s.quit)
	return s.proxy.removeAll()
}

func main() {
	s := &Server{proxy: newProxy(), events: make(chan PortMapping), quit: make(chan struct{})}
	// Port mappings forwarded by the guest agent for two published containers.
	s.handleEvent(PortMapping{ListenIP: "0.0.0.0", ListenPort: 8080, ConnectIP: "172.26.0.2", ConnectPort: 8080})
	s.handleEvent(PortMapping{ListenIP: "0.0.0.0", ListenPort: 5432, ConnectIP: "172.26.0.2", ConnectPort: 5432})
	// The Windows service manager sends SERVICE_CONTROL_STOP.
	if err := s.Stop(); err != nil {
		fmt.Println("stop:", err)
	}
	fmt.Println("privileged service stopped")
}
