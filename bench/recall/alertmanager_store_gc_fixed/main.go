// Project: prometheus/alertmanager (store/store.go, provider/mem/mem.go) -- fixed twin
// Fix applied: prometheus/alertmanager#3715, store.Alerts.gc releases its mutex before invoking
// the GC callback, so the callback's mem.Alerts.mtx is never taken under the store lock.

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
	var resolved []*Alert
	for fp, alert := range a.c {
		if alert.Resolved {
			delete(a.c, fp)
			resolved = append(resolved, alert)
		}
	}
	cb := a.cb
	a.Unlock()
	cb(resolved)
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
		a.mtx.Lock()
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
