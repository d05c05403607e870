// Package main models Consul's agent local state (agent/local/state.go) and
// its check runner: when a health check changes status, the check's
// onStatusChange callback is invoked while the check lock is held. The
// callback updates the service catalog, which takes catalog.mu. The lock order
// is always check.mu -> catalog.mu; the catalog never calls back into checks
// while holding its own lock.
package main

import (
	"fmt"
	"sync"
)

const (
	statusPassing  = "passing"
	statusCritical = "critical"
)

type healthCheck struct {
	mu             sync.Mutex
	id             string
	serviceID      string
	status         string
	output         string
	onStatusChange func(checkID, serviceID, status string)
}

func (c *healthCheck) Update(status, output string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.output = output
	if c.status == status {
		return
	}
	c.status = status
	if h := c.onStatusChange; h != nil {
		h(c.id, c.serviceID, status)
	}
}

func (c *healthCheck) Status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

type catalog struct {
	mu       sync.Mutex
	critical map[string]map[string]bool // service -> failing check IDs
	syncs    int
}

func newCatalog() *catalog {
	return &catalog{critical: make(map[string]map[string]bool)}
}

// updateCheck is the callback; it only takes catalog.mu (after check.mu).
func (cat *catalog) updateCheck(checkID, serviceID, status string) {
	cat.mu.Lock()
	defer cat.mu.Unlock()
	m := cat.critical[serviceID]
	if m == nil {
		m = make(map[string]bool)
		cat.critical[serviceID] = m
	}
	if status == statusCritical {
		m[checkID] = true
	} else {
		delete(m, checkID)
	}
	cat.syncs++
}

func (cat *catalog) Healthy(serviceID string) bool {
	cat.mu.Lock()
	defer cat.mu.Unlock()
	return len(cat.critical[serviceID]) == 0
}

func (cat *catalog) Syncs() int {
	cat.mu.Lock()
	defer cat.mu.Unlock()
	return cat.syncs
}

func main() {
	cat := newCatalog()
	var checks []*healthCheck
	for i := 0; i < 6; i++ {
		checks = append(checks, &healthCheck{
			id:             fmt.Sprintf("service:web-%d", i),
			serviceID:      fmt.Sprintf("web-%d", i%3),
			status:         statusPassing,
			onStatusChange: cat.updateCheck,
		})
	}

	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func(i int, c *healthCheck) {
			defer wg.Done()
			for n := 0; n < 100; n++ {
				st := statusPassing
				if (n+i)%3 == 0 {
					st = statusCritical
				}
				c.Update(st, fmt.Sprintf("HTTP GET: %s", st))
			}
			c.Update(statusPassing, "HTTP GET: 200 OK")
		}(i, c)
	}

	// An API reader polls the catalog concurrently (catalog lock only).
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; n < 300; n++ {
			_ = cat.Healthy(fmt.Sprintf("web-%d", n%3))
		}
	}()
	wg.Wait()

	for i := 0; i < 3; i++ {
		id := fmt.Sprintf("web-%d", i)
		if !cat.Healthy(id) {
			panic("service should be healthy: " + id)
		}
	}
	for _, c := range checks {
		if c.Status() != statusPassing {
			panic("check not passing")
		}
	}
	fmt.Println("catalog syncs:", cat.Syncs())
}
