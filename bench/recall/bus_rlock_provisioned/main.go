// Pattern: caddyserver/caddy modules/caddyevents App: subscriptions are
// written (Lock) only while the app is being provisioned, before Start
// launches the dispatcher. At run time Emit holds the read lock while it
// enqueues, and the dispatcher takes the read lock to look up handlers.
// With no writer ever contending during run time, RLock never waits, so an
// Emit blocked on a full queue cannot stall the dispatcher.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

const queueSize = 64

type Event struct {
	Name   string
	Origin string
	Data   map[string]any
}

type Handler func(Event)

type App struct {
	mu            sync.RWMutex
	subscriptions map[string][]Handler

	queue chan Event
	done  chan struct{}
}

func NewApp() *App {
	return &App{
		subscriptions: make(map[string][]Handler),
		queue:         make(chan Event, queueSize),
		done:          make(chan struct{}),
	}
}

// Subscribe is only valid during provisioning (before Start).
func (a *App) Subscribe(name string, h Handler) {
	a.mu.Lock()
	a.subscriptions[name] = append(a.subscriptions[name], h)
	a.mu.Unlock()
}

func (a *App) Start() {
	go a.dispatch()
}

func (a *App) dispatch() {
	defer close(a.done)
	for ev := range a.queue {
		a.mu.RLock()
		handlers := a.subscriptions[ev.Name]
		a.mu.RUnlock()
		for _, h := range handlers {
			h(ev)
		}
	}
}

// Emit enqueues an event if anybody listens for it.
func (a *App) Emit(origin, name string, data map[string]any) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if len(a.subscriptions[name]) == 0 {
		return
	}
	a.queue <- Event{Name: name, Origin: origin, Data: data}
}

// Stop must be called after all emitters have returned.
func (a *App) Stop() {
	close(a.queue)
	<-a.done
}

func main() {
	app := NewApp()

	var certs, handshakes atomic.Int64
	app.Subscribe("cert_obtained", func(e Event) { certs.Add(1) })
	app.Subscribe("tls_handshake", func(e Event) { handshakes.Add(1) })
	app.Subscribe("tls_handshake", func(e Event) {
		if _, ok := e.Data["sni"]; !ok {
			panic("missing sni")
		}
	})

	app.Start()

	var emitters sync.WaitGroup
	for i := 0; i < 6; i++ {
		emitters.Add(1)
		go func(i int) {
			defer emitters.Done()
			for j := 0; j < 500; j++ {
				app.Emit("tls", "tls_handshake", map[string]any{"sni": fmt.Sprintf("h%d.example", i)})
				if j%100 == 0 {
					app.Emit("tls", "cert_obtained", map[string]any{"identifier": "example.com"})
				}
				app.Emit("http", "request_done", nil) // no subscribers: dropped
			}
		}(i)
	}
	emitters.Wait()
	app.Stop()

	fmt.Printf("handshakes=%d certs=%d\n", handshakes.Load(), certs.Load())
}
