// Modeled on moby/docker's pkg/locker (per-name mutexes kept in a map,
// created on a miss under the locker's own mutex, with defer l.mu.Unlock()
// in the accessor) as used by the daemon's container store.
//
// BUGGY: AB-BA inversion between a name lock and the store mutex.
//   - Rename holds the name lock (names.Lock(id) -> get) and then takes
//     d.mu at main.go:59.
//   - Prune holds d.mu and then takes the name lock via names.Lock(id)
//     at main.go:75.
//
// Rename(id) and Prune racing on the same id deadlock: Rename waits for
// d.mu while holding the name lock, Prune waits for the name lock while
// holding d.mu. (The correct version releases d.mu before names.Lock.)
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

// Rename: name lock -> d.mu
func (d *Daemon) Rename(id, newName string) {
	d.names.Lock(id)
	defer d.names.Unlock(id)

	d.mu.Lock()
	if c := d.containers[id]; c != nil {
		c.Name = newName
	}
	d.mu.Unlock()
}

// Prune: d.mu -> name lock (inverted)
func (d *Daemon) Prune() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for id, c := range d.containers {
		if c.Running {
			continue
		}
		d.names.Lock(id)
		delete(d.containers, id)
		d.names.Unlock(id)
		n++
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
