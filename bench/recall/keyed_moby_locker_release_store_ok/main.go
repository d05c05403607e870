// Modeled on moby/docker's pkg/locker (per-name mutexes kept in a map and
// created on a miss under the locker's own mutex) as used by the daemon's
// container store.
//
// CORRECT: the only nesting is name lock -> store.mu (Rename, and each
// iteration of Prune). Prune needs store.mu to find candidates, but it
// copies the IDs and RELEASES store.mu before taking any name lock, then
// re-takes store.mu under the name lock. The locker's own mutex (l.mu) is
// held only inside get and never while waiting for a name lock. No cycle.
package main

import (
	"fmt"
	"sync"
)

type Locker struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func NewLocker() *Locker { return &Locker{locks: make(map[string]*sync.Mutex)} }

// get returns the mutex for name, creating it on a miss.
func (l *Locker) get(name string) *sync.Mutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.locks[name]
	if !ok {
		m = new(sync.Mutex)
		l.locks[name] = m
	}
	return m
}

func (l *Locker) Lock(name string)   { l.get(name).Lock() }
func (l *Locker) Unlock(name string) { l.get(name).Unlock() }

type Container struct {
	Name    string
	Running bool
}

type Daemon struct {
	mu         sync.Mutex
	containers map[string]*Container
	names      *Locker
}

func (d *Daemon) Rename(id, newName string) {
	d.names.Lock(id)
	defer d.names.Unlock(id)

	d.mu.Lock()
	if c := d.containers[id]; c != nil {
		c.Name = newName
	}
	d.mu.Unlock()
}

func (d *Daemon) Prune() int {
	d.mu.Lock()
	var ids []string
	for id, c := range d.containers {
		if !c.Running {
			ids = append(ids, id)
		}
	}
	d.mu.Unlock() // released before any name lock is requested

	n := 0
	for _, id := range ids {
		d.names.Lock(id)
		d.mu.Lock()
		if c := d.containers[id]; c != nil && !c.Running {
			delete(d.containers, id)
			n++
		}
		d.mu.Unlock()
		d.names.Unlock(id)
	}
	return n
}

func main() {
	d := &Daemon{containers: map[string]*Container{}, names: NewLocker()}
	for i := 0; i < 6; i++ {
		d.containers[fmt.Sprint("c", i)] = &Container{Name: fmt.Sprint("n", i), Running: i%2 == 0}
	}
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(2)
		go func(i int) { defer wg.Done(); d.Rename(fmt.Sprint("c", i), "renamed") }(i)
		go func() { defer wg.Done(); d.Prune() }()
	}
	wg.Wait()
	fmt.Println(len(d.containers))
}
