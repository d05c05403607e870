// moby/libnetwork service_common.go: rmServiceBinding holds the service lock
// and takes the controller lock to drop a service whose last load balancer is
// gone, while cleanupServiceBindings (network delete / node leave) holds the
// controller lock and takes each service's lock: AB/BA between controller and
// service. Fixed in moby/libnetwork#1507 ("Do not ever wrap controller lock
// around service lock").
package main

import (
	"fmt"
	"sync"
)

type loadBalancer struct {
	vip      string
	backEnds map[string]string // endpoint ID -> task IP
}

type service struct {
	sync.Mutex
	name          string
	loadBalancers map[string]*loadBalancer // network ID -> lb
}

type controller struct {
	sync.Mutex
	serviceBindings map[string]*service
}

func (c *controller) addServiceBinding(sid, nid, eid, ip string) {
	c.Lock()
	s, ok := c.serviceBindings[sid]
	if !ok {
		s = &service{name: sid, loadBalancers: make(map[string]*loadBalancer)}
		c.serviceBindings[sid] = s
	}
	c.Unlock()

	s.Lock()
	defer s.Unlock()
	lb, ok := s.loadBalancers[nid]
	if !ok {
		lb = &loadBalancer{vip: "10.255.0.5", backEnds: make(map[string]string)}
		s.loadBalancers[nid] = lb
	}
	lb.backEnds[eid] = ip
}

func (c *controller) rmServiceBinding(sid, nid, eid string) {
	c.Lock()
	s, ok := c.serviceBindings[sid]
	c.Unlock()
	if !ok {
		return
	}
	s.Lock()
	defer s.Unlock()
	if lb, ok := s.loadBalancers[nid]; ok {
		delete(lb.backEnds, eid)
		if len(lb.backEnds) == 0 {
			delete(s.loadBalancers, nid)
		}
	}
	if len(s.loadBalancers) == 0 { // last load balancer gone: remove the service itself
		c.Lock()
		delete(c.serviceBindings, sid)
		c.Unlock()
	}
}

func (c *controller) cleanupServiceBindings(cleanupNID string) {
	c.Lock()
	defer c.Unlock()
	for _, s := range c.serviceBindings {
		s.Lock()
		for nid, lb := range s.loadBalancers {
			if cleanupNID != "" && nid != cleanupNID {
				continue
			}
			for eid := range lb.backEnds {
				delete(lb.backEnds, eid) // ipvs/iptables rules torn down here
			}
		}
		s.Unlock()
	}
}

func main() {
	c, wg := &controller{serviceBindings: make(map[string]*service)}, sync.WaitGroup{}

	// Agent event loops: tasks of each service come and go on the ingress network.
	for _, sid := range []string{"web", "api", "db", "cache"} {
		wg.Add(1)
		go func(sid string) {
			defer wg.Done()
			for i := 0; i < 20000; i++ {
				eid := fmt.Sprintf("%s.%d", sid, i)
				c.addServiceBinding(sid, "ingress", eid, "10.255.0.9")
				c.rmServiceBinding(sid, "ingress", eid)
			}
		}(sid)
	}

	// Network deletion / cluster leave cleaning up the overlay network.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20000; i++ {
			c.cleanupServiceBindings("overlay1")
		}
	}()

	wg.Wait()
	fmt.Println("services left:", len(c.serviceBindings))
}
