package main

import (
	"sync"
	"time"
)

type manager struct {
	lock sync.RWMutex
	pods map[string]int
}

func (m *manager) count() int {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return len(m.pods)
}

func (m *manager) status() int {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return m.count() + 1
}

func (m *manager) update(k string) {
	m.lock.Lock()
	m.pods[k]++
	m.lock.Unlock()
}

func main() {
	m := &manager{pods: map[string]int{}}
	go func() {
		for {
			m.update("a")
		}
	}()
	for {
		m.status()
		time.Sleep(time.Millisecond)
	}
}
