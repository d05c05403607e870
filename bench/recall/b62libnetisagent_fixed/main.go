// moby/libnetwork #1364 ("Check for isAgent() outside the network lock to
// avoid deadlocks"), vendored into docker 1.12.0 by moby/moby #25191 after
// libnetwork #1346 (an RC5 fix) introduced the deadlock.
//
// network.driver() computes the network's scope under n.Lock() and asks the
// controller whether this node is a swarm agent; isAgent() takes the
// controller lock. The controller's service-record watch loop does the
// opposite: it holds c.Lock() while indexing its watch map by
// ep.getNetwork().ID(), and ID() takes the network lock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type DaemonCfg struct{ IsAgent bool }
type Config struct{ Daemon DaemonCfg }

type driverapi struct{ name, scope string }

// debugf stands for the daemon's debug logging to a slow log sink.
func debugf(format string, args ...interface{}) {
	time.Sleep(30 * time.Millisecond)
	_ = fmt.Sprintf(format, args...)
}

type controller struct {
	sync.Mutex
	cfg      *Config
	drivers  map[string]*driverapi
	svcWatch map[string]*netWatch
}

type netWatch struct{ localEps map[string]*endpoint }

func (c *controller) isAgent() bool {
	c.Lock()
	defer c.Unlock()
	if c.cfg == nil {
		return false
	}
	return c.cfg.Daemon.IsAgent
}

type network struct {
	sync.Mutex
	ctrlr       *controller
	id, name    string
	networkType string
	scope       string
	dynamic     bool
}

func (n *network) ID() string { n.Lock(); defer n.Unlock(); return n.id }

func (n *network) getController() *controller { n.Lock(); defer n.Unlock(); return n.ctrlr }

func (n *network) resolveDriver(name string) (*driverapi, error) {
	c := n.getController()
	c.Lock()
	d := c.drivers[name]
	c.Unlock()
	if d == nil {
		return nil, fmt.Errorf("could not resolve driver %s in registry", name)
	}
	return d, nil
}

func (n *network) driver() (*driverapi, error) {
	d, err := n.resolveDriver(n.networkType)
	if err != nil {
		return nil, err
	}
	c := n.getController()
	isAgent := c.isAgent()
	n.Lock()
	n.scope = d.scope
	debugf("network %s: driver %s data scope %s", n.name, d.name, d.scope)
	if isAgent || n.dynamic {
		// In agent mode all networks are local scope regardless of the driver.
		n.scope = "local"
	}
	n.Unlock()
	return d, nil
}

type endpoint struct {
	sync.Mutex
	id, name string
	network  *network
}

func (ep *endpoint) getNetwork() *network { ep.Lock(); defer ep.Unlock(); return ep.network }

// CreateEndpoint: docker run / network connect.
func (n *network) CreateEndpoint(name string) (*endpoint, error) {
	ep := &endpoint{id: name + "-ep", name: name, network: n}
	if _, err := n.driver(); err != nil {
		return nil, err
	}
	return ep, nil
}

// processEndpointCreate runs on the controller's store watch loop.
func (c *controller) processEndpointCreate(nmap map[string]*netWatch, ep *endpoint) {
	c.Lock()
	nw, ok := nmap[ep.getNetwork().ID()]
	c.Unlock()
	if ok {
		nw.localEps[ep.id] = ep
	}
}

func main() {
	c := &controller{cfg: &Config{Daemon: DaemonCfg{IsAgent: true}},
		drivers: map[string]*driverapi{"overlay": {"overlay", "global"}}, svcWatch: map[string]*netWatch{}}
	ingress := &network{ctrlr: c, id: "4d2b0c", name: "ingress", networkType: "overlay", dynamic: true}
	c.svcWatch[ingress.id] = &netWatch{localEps: map[string]*endpoint{}}

	peer := &endpoint{id: "peer-ep", name: "web.1", network: ingress}
	done := make(chan struct{})
	go func() { // watch loop: an endpoint created on another node shows up in the store
		defer close(done)
		time.Sleep(10 * time.Millisecond)
		c.processEndpointCreate(c.svcWatch, peer)
	}()

	ep, err := ingress.CreateEndpoint("web.2")
	<-done
	fmt.Println("created", ep.name, err, "scope", ingress.scope, "watched eps", len(c.svcWatch[ingress.id].localEps))
}
