// Pattern: prometheus/prometheus discovery.Manager: providers update their
// target groups under the manager lock and then poke the sender through
// triggerSend, a channel of capacity 1. A sendPending flag, guarded by the
// same lock, makes the poke happen only when no poke is outstanding; the
// sender clears the flag under the lock right before it snapshots the
// targets. So the channel holds at most one token whenever the flag is
// false, and the poke under the lock always has room.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

const triggerQueue = 1

type targetGroup struct {
	Source  string
	Targets []string
}

type Manager struct {
	mtx         sync.Mutex
	targets     map[string]*targetGroup // provider/source -> group
	sendPending bool
	triggerSend chan struct{}

	syncs   int
	lastLen int
}

func NewManager() *Manager {
	return &Manager{
		targets:     make(map[string]*targetGroup),
		triggerSend: make(chan struct{}, triggerQueue),
	}
}

func (m *Manager) updateGroup(provider string, tg *targetGroup) {
	m.mtx.Lock()
	defer m.mtx.Unlock()
	m.targets[provider+"/"+tg.Source] = tg
	if !m.sendPending {
		m.sendPending = true
		m.triggerSend <- struct{}{}
	}
}

func (m *Manager) allGroups() []string {
	keys := make([]string, 0, len(m.targets))
	for k := range m.targets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sender is the goroutine that ships coalesced updates to the scrape manager.
func (m *Manager) sender(done chan<- struct{}) {
	defer close(done)
	for range m.triggerSend {
		m.mtx.Lock()
		m.sendPending = false
		groups := m.allGroups()
		m.mtx.Unlock()

		time.Sleep(200 * time.Microsecond) // scrape manager applies the update
		m.syncs++
		m.lastLen = len(groups)
	}
}

func main() {
	m := NewManager()
	done := make(chan struct{})
	go m.sender(done)

	var providers sync.WaitGroup
	for _, p := range []string{"kubernetes_sd/0", "file_sd/0", "consul_sd/0", "dns_sd/0"} {
		providers.Add(1)
		go func(p string) {
			defer providers.Done()
			for i := 0; i < 300; i++ {
				m.updateGroup(p, &targetGroup{
					Source:  fmt.Sprintf("src-%d", i%25),
					Targets: []string{fmt.Sprintf("10.0.%d.%d:9100", i%4, i%200)},
				})
			}
		}(p)
	}
	providers.Wait()
	close(m.triggerSend)
	<-done
	fmt.Printf("syncs=%d groups=%d\n", m.syncs, m.lastLen)
}
