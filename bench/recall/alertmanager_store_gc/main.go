// Project: prometheus/alertmanager (store/store.go: Alerts.gc; provider/mem/mem.go: Alerts.Subscribe, GC callback)
// Bug: the store GC goroutine holds store.Alerts' mutex while invoking the GC callback registered
// by provider/mem, and the callback takes mem.Alerts.mtx to prune listeners. Concurrently
// mem.Alerts.Subscribe holds mem.Alerts.mtx and calls store.Alerts.List, which takes the store
// mutex: store.mtx -> mem.mtx (callback) versus mem.mtx -> store.mtx (Subscribe).
// Upstream fix: prometheus/alertmanager#3715 releases the store lock before calling the callback.

package main

import (
	"fmt"
	"sync"
)

type Fingerprint uint64

type Alert struct {
	Labels   map[string]string
	Resolved bool
}

func (a *Alert) Fingerprint() Fingerprint { return Fingerprint(len(a.Labels["alertname"])) }

// Alerts is store.Alerts: a gc-ed map of alerts.
type Alerts struct {
	sync.Mutex
	c  map[Fingerprint]*Alert
	cb func([]*Alert)
}

func (a *Alerts) SetGCCallback(cb func([]*Alert)) { a.Lock(); defer a.Unlock(); a.cb = cb }

func (a *Alerts) gc() {
	a.Lock()
	defer a.Unlock()
	var resolved []*Alert
	for fp, alert := range a.c {
		if alert.Resolved {
			delete(a.c, fp)
			resolved = append(resolved, alert)
		}
	}
	a.cb(resolved)
}

func (a *Alerts) List() []*Alert {
	a.Lock()
	defer a.Unlock()
	out := make([]*Alert, 0, len(a.c))
	for _, al := range a.c {
		out = append(out, al)
	}
	return out
}

func (a *Alerts) Set(al *Alert) { a.Lock(); defer a.Unlock(); a.c[al.Fingerprint()] = al }

type listeningAlerts struct {
	alerts chan *Alert
	done   chan struct{}
}

// MemAlerts is provider/mem.Alerts.
type MemAlerts struct {
	alerts    *Alerts
	mtx       sync.Mutex
	listeners map[int]listeningAlerts
	next      int
}

func NewMemAlerts() *MemAlerts {
	a := &MemAlerts{alerts: &Alerts{c: map[Fingerprint]*Alert{}}, listeners: map[int]listeningAlerts{}}
	a.alerts.SetGCCallback(func(resolved []*Alert) {
		a.mtx.Lock() // DEADLOCK HERE
		for i, l := range a.listeners {
			select {
			case <-l.done:
				delete(a.listeners, i)
				close(l.alerts)
			default:
			}
		}
		a.mtx.Unlock()
	})
	return a
}

func (a *MemAlerts) Subscribe() (<-chan *Alert, chan struct{}) {
	a.mtx.Lock()
	defer a.mtx.Unlock()
	alerts := a.alerts.List()
	ch := make(chan *Alert, max(len(alerts), 200))
	for _, al := range alerts {
		ch <- al
	}
	done := make(chan struct{})
	a.listeners[a.next] = listeningAlerts{alerts: ch, done: done}
	a.next++
	return ch, done
}

func main() {
	m := NewMemAlerts()
	gcDone := make(chan struct{})
	go func() { // store.Alerts.Run: periodic gc
		defer close(gcDone)
		for i := range 5000 {
			m.alerts.Set(&Alert{Labels: map[string]string{"alertname": fmt.Sprint(i % 7)}, Resolved: i%2 == 0})
			m.alerts.gc()
		}
	}()
	for range 5000 { // dispatcher / inhibitor (re)subscribing
		_, done := m.Subscribe()
		close(done)
	}
	<-gcDone
	fmt.Println("listeners:", len(m.listeners))
}
