// Project: prometheus/alertmanager (dispatch/dispatch.go: Dispatcher.Stop, Dispatcher.Groups; hit by grafana on shutdown)
// Bug: Dispatcher.Stop takes d.mtx.Lock and returns early without unlocking when d.cancel is nil
// (Stop called a second time, or before Run set cancel). The mutex stays locked forever, so the
// next caller (a later Stop, the API's Groups via d.mtx.RLock, or Run itself) blocks.
// Upstream fix: prometheus/alertmanager#2558 unlocks d.mtx on the d.cancel == nil return path.

package main

import (
	"context"
	"fmt"
	"sync"
)

type Alert struct{ Labels map[string]string }

type Route struct{ Receiver string }

type aggrGroup struct {
	routeKey string
	alerts   []*Alert
}

type Dispatcher struct {
	route  *Route
	alerts chan *Alert // stands in for provider.AlertIterator

	mtx                sync.RWMutex
	aggrGroupsPerRoute map[*Route]map[string]*aggrGroup
	aggrGroupsNum      int

	done   chan struct{}
	ctx    context.Context
	cancel func()
}

func NewDispatcher(r *Route, alerts chan *Alert) *Dispatcher {
	return &Dispatcher{route: r, alerts: alerts, done: make(chan struct{})}
}

func (d *Dispatcher) Run() {
	d.mtx.Lock()
	d.aggrGroupsPerRoute = map[*Route]map[string]*aggrGroup{}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.mtx.Unlock()

	d.run()
	close(d.done)
}

func (d *Dispatcher) run() {
	for {
		select {
		case alert := <-d.alerts:
			d.processAlert(alert, d.route)
		case <-d.ctx.Done():
			return
		}
	}
}

func (d *Dispatcher) processAlert(alert *Alert, route *Route) {
	fp := alert.Labels["alertname"]
	d.mtx.Lock()
	defer d.mtx.Unlock()
	routeGroups, ok := d.aggrGroupsPerRoute[route]
	if !ok {
		routeGroups = map[string]*aggrGroup{}
		d.aggrGroupsPerRoute[route] = routeGroups
	}
	ag, ok := routeGroups[fp]
	if !ok {
		ag = &aggrGroup{routeKey: route.Receiver + "/" + fp}
		routeGroups[fp] = ag
		d.aggrGroupsNum++
	}
	ag.alerts = append(ag.alerts, alert)
}

// Groups is served by the /api/v2/alerts/groups handler.
func (d *Dispatcher) Groups() map[string]int {
	d.mtx.RLock() // DEADLOCK HERE
	defer d.mtx.RUnlock()
	out := map[string]int{}
	for _, groups := range d.aggrGroupsPerRoute {
		for _, ag := range groups {
			out[ag.routeKey] = len(ag.alerts)
		}
	}
	return out
}

// Stop the dispatcher.
func (d *Dispatcher) Stop() {
	if d == nil {
		return
	}
	d.mtx.Lock()
	if d.cancel == nil {
		return
	}
	d.cancel()
	d.cancel = nil
	d.mtx.Unlock()

	<-d.done
}

func main() {
	alerts := make(chan *Alert)
	d := NewDispatcher(&Route{Receiver: "team-x-pager"}, alerts)
	go d.Run()
	alerts <- &Alert{Labels: map[string]string{"alertname": "HighLatency"}}
	alerts <- &Alert{Labels: map[string]string{"alertname": "InstanceDown"}}

	d.Stop() // config reload stops the old dispatcher
	d.Stop() // server shutdown stops it again
	fmt.Println("groups:", d.Groups())
}
