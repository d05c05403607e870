// Project: fsouza/go-dockerclient (the Docker client library used by
// registrator, Tsuru, Drone and others), mid-2015.
// Files/functions: event.go: Client.AddEventListener,
// eventMonitoringState.enableEventMonitoring, monitorEvents, updateLastSeen,
// sendEvent, isEnabled; Client.eventHijack.
// Issue/PR: fsouza/go-dockerclient#311 "Dead lock in docker events not
// resolved in latest version" (follow-up of #203), fixed by PR #312
// "fix events deadlock".
//
// eventMonitoringState embeds a sync.RWMutex. For every event read from the
// daemon, monitorEvents calls updateLastSeen (write lock) and hands the event
// to a new goroutine running sendEvent. sendEvent takes the read lock for the
// whole delivery and then asks isEnabled(), which read-locks the same mutex
// again. When the next event arrives between the two read locks, the
// monitor's updateLastSeen queues for the write lock; the queued writer stops
// the nested RLock in isEnabled, sendEvent never releases its first read
// lock, and the writer waits for it forever: every later isEnabled caller
// (the hijack goroutine, AddEventListener) piles up behind them. The fix
// reads eventState.enabled directly inside sendEvent, since the lock is
// already held.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type APIEvents struct {
	Status string
	ID     string
	From   string
	Time   int64
}

var ErrNoListeners = errors.New("no listeners present to receive event")

// deliveryDelay stands in for the scheduling gap between sendEvent taking
// its read lock and reaching the enabled check.
var deliveryDelay = 50 * time.Millisecond

type eventMonitoringState struct {
	sync.RWMutex
	sync.WaitGroup
	enabled   bool
	lastSeen  int64
	C         chan *APIEvents
	errC      chan error
	listeners []chan<- *APIEvents
}

type Client struct {
	daemon       chan APIEvents // the /events stream of the daemon
	eventMonitor *eventMonitoringState
}

func (c *Client) AddEventListener(listener chan<- *APIEvents) error {
	var err error
	if !c.eventMonitor.isEnabled() {
		err = c.eventMonitor.enableEventMonitoring(c)
		if err != nil {
			return err
		}
	}
	return c.eventMonitor.addListener(listener)
}

func (eventState *eventMonitoringState) addListener(listener chan<- *APIEvents) error {
	eventState.Lock()
	defer eventState.Unlock()
	eventState.Add(1)
	eventState.listeners = append(eventState.listeners, listener)
	return nil
}

func (eventState *eventMonitoringState) enableEventMonitoring(c *Client) error {
	eventState.Lock()
	defer eventState.Unlock()
	if !eventState.enabled {
		eventState.enabled = true
		eventState.lastSeen = -1
		eventState.C = make(chan *APIEvents, 100)
		eventState.errC = make(chan error, 1)
		go eventState.monitorEvents(c)
	}
	return nil
}

func (eventState *eventMonitoringState) monitorEvents(c *Client) {
	for eventState.noListeners() {
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.eventHijack(eventState.lastSeen, eventState.C, eventState.errC); err != nil {
		return
	}
	for eventState.isEnabled() {
		timeout := time.After(100 * time.Millisecond)
		select {
		case ev, ok := <-eventState.C:
			if !ok {
				return
			}
			eventState.updateLastSeen(ev)
			go eventState.sendEvent(ev)
		case <-eventState.errC:
			return
		case <-timeout:
			continue
		}
	}
}

func (eventState *eventMonitoringState) noListeners() bool {
	eventState.RLock()
	defer eventState.RUnlock()
	return len(eventState.listeners) == 0
}

func (eventState *eventMonitoringState) isEnabled() bool {
	eventState.RLock()
	defer eventState.RUnlock()
	return eventState.enabled
}

func (eventState *eventMonitoringState) sendEvent(event *APIEvents) {
	eventState.RLock()
	defer eventState.RUnlock()
	eventState.Add(1)
	defer eventState.Done()
	time.Sleep(deliveryDelay)
	if eventState.isEnabled() {
		if len(eventState.listeners) == 0 {
			eventState.errC <- ErrNoListeners
			return
		}
		for _, listener := range eventState.listeners {
			listener <- event
		}
	}
}

func (eventState *eventMonitoringState) updateLastSeen(e *APIEvents) {
	eventState.Lock()
	defer eventState.Unlock()
	if eventState.lastSeen < e.Time {
		eventState.lastSeen = e.Time
	}
}

func (c *Client) eventHijack(startTime int64, eventChan chan *APIEvents, errChan chan error) error {
	go func() {
		for event := range c.daemon {
			if event.Time == 0 {
				continue
			}
			if !c.eventMonitor.isEnabled() {
				return
			}
			ev := event
			eventChan <- &ev
		}
	}()
	return nil
}

func main() {
	c := &Client{daemon: make(chan APIEvents), eventMonitor: &eventMonitoringState{}}
	listener := make(chan *APIEvents, 10)
	if err := c.AddEventListener(listener); err != nil {
		panic(err)
	}
	go func() {
		c.daemon <- APIEvents{Status: "start", ID: "a1", From: "busybox", Time: 1}
		time.Sleep(20 * time.Millisecond)
		c.daemon <- APIEvents{Status: "die", ID: "a1", From: "busybox", Time: 2}
	}()
	for i := 0; i < 2; i++ {
		ev := <-listener
		fmt.Println("event", ev.Status, ev.ID)
	}
}
