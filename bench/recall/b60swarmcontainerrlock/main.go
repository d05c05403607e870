// Project: docker/swarm (classic Docker Swarm manager, docker-archive/classicswarm), v1.2.1 (April 2016).
// Files/functions: cluster/swarm/cluster.go (Cluster.Container, Cluster.Containers,
// Cluster.generateUniqueID, Cluster.createContainer, Cluster.checkNameUniqueness,
// Cluster.getEngineByAddr, Cluster.removeEngine, Cluster.validatePendingEngine,
// Cluster.monitorDiscovery), cluster/engine.go (Engine.Containers),
// cluster/container.go (Containers.Get).
// Issue: docker/swarm#2208 "swarm hangs in some cases"; fix: PR #2210
// "Do not allow double RLock() of RWMutex".
//
// The swarm Cluster embeds a sync.RWMutex that guards its engine maps.
// Cluster.Container(IDOrName), used by every API call that names a container
// and by generateUniqueID when a container is created, read-locks the
// cluster and then calls the exported Cluster.Containers(), which read-locks
// it again to gather the containers of every engine. The discovery and
// pending-engine monitors write-lock the cluster whenever an engine is added,
// validated or removed. When such a writer arrives between the two read
// locks, the second RLock waits for the writer and the writer waits for the
// first read lock: the manager stops answering (the reporter's swarm hung
// every 10-20 minutes). The fix drops the outer RLock in Container (and in
// RenameContainer, which nested checkNameUniqueness the same way).
package main

import (
	"fmt"
	"strings"
	"sync"
)

type Container struct {
	Id     string
	Names  []string
	Engine *Engine
}

type Containers []*Container

// Get returns a container using its ID or Name
func (containers Containers) Get(IDOrName string) *Container {
	for _, c := range containers {
		if c.Id == IDOrName {
			return c
		}
	}
	for _, c := range containers {
		for _, name := range c.Names {
			if name == IDOrName || name == "/"+IDOrName {
				return c
			}
		}
	}
	for _, c := range containers {
		if strings.HasPrefix(c.Id, IDOrName) {
			return c
		}
	}
	return nil
}

type Engine struct {
	sync.RWMutex
	ID         string
	Addr       string
	containers map[string]*Container
}

func (e *Engine) Containers() Containers {
	e.RLock()
	defer e.RUnlock()
	out := Containers{}
	for _, c := range e.containers {
		out = append(out, c)
	}
	return out
}

type Cluster struct {
	sync.RWMutex
	engines        map[string]*Engine
	pendingEngines map[string]*Engine
}

// Containers returns all the containers in the cluster.
func (c *Cluster) Containers() Containers {
	c.RLock()
	defer c.RUnlock()
	out := Containers{}
	for _, e := range c.engines {
		out = append(out, e.Containers()...)
	}
	return out
}

// Container returns the container with IDOrName in the cluster
func (c *Cluster) Container(IDOrName string) *Container {
	// Abort immediately if the name is empty.
	if len(IDOrName) == 0 {
		return nil
	}
	c.RLock()
	defer c.RUnlock()
	return c.Containers().Get(IDOrName)
}

func (c *Cluster) getEngineByAddr(addr string) *Engine {
	c.RLock()
	defer c.RUnlock()
	if engine, ok := c.pendingEngines[addr]; ok {
		return engine
	}
	for _, engine := range c.engines {
		if engine.Addr == addr {
			return engine
		}
	}
	return nil
}

func (c *Cluster) validatePendingEngine(engine *Engine) bool {
	c.Lock()
	defer c.Unlock()
	if _, exists := c.pendingEngines[engine.Addr]; !exists {
		return false
	}
	delete(c.pendingEngines, engine.Addr)
	c.engines[engine.ID] = engine
	return true
}

func (c *Cluster) removeEngine(addr string) bool {
	engine := c.getEngineByAddr(addr)
	if engine == nil {
		return false
	}
	c.Lock()
	defer c.Unlock()
	if _, ok := c.pendingEngines[addr]; ok {
		delete(c.pendingEngines, addr)
	} else {
		delete(c.engines, engine.ID)
	}
	return true
}

func (c *Cluster) addEngine(e *Engine) {
	c.Lock()
	c.pendingEngines[e.Addr] = e
	c.Unlock()
	c.validatePendingEngine(e)
}

// monitorDiscovery replays a flapping discovery backend: node2 keeps
// leaving and coming back.
func (c *Cluster) monitorDiscovery(node *Engine, rounds int) {
	for i := 0; i < rounds; i++ {
		c.removeEngine(node.Addr)
		c.addEngine(node)
	}
}

func main() {
	c := &Cluster{engines: map[string]*Engine{}, pendingEngines: map[string]*Engine{}}
	for i := 1; i <= 2; i++ {
		e := &Engine{ID: fmt.Sprintf("node%d", i), Addr: fmt.Sprintf("10.0.0.%d:2375", i), containers: map[string]*Container{}}
		for j := 0; j < 20; j++ {
			id := fmt.Sprintf("%s-ctr%02d", e.ID, j)
			e.containers[id] = &Container{Id: id, Names: []string{"/" + id}, Engine: e}
		}
		c.engines[e.ID] = e
	}
	node2 := c.engines["node2"]

	const rounds = 200000
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // docker -H swarm inspect, over and over
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			c.Container("node1-ctr07")
		}
	}()
	go func() {
		defer wg.Done()
		c.monitorDiscovery(node2, rounds)
	}()
	wg.Wait()
	fmt.Println("exited cleanly")
}
