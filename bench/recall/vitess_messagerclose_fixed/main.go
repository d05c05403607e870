package main

import (
	"fmt"
	"maps"
	"sync"
	"time"
)

type Table struct {
	Name string
	Type int
}

const NoType, Message = 0, 1

type notifier func(full map[string]*Table, created, altered, dropped []*Table, udfsChanged bool)

type SchemaEngine struct {
	mu         sync.Mutex
	tables     map[string]*Table
	notifierMu sync.Mutex
	notifiers  map[string]notifier
}

func (se *SchemaEngine) RegisterNotifier(name string, f notifier) {
	se.notifierMu.Lock()
	defer se.notifierMu.Unlock()
	se.notifiers[name] = f
	f(maps.Clone(se.tables), nil, nil, nil, false)
}

func (se *SchemaEngine) UnregisterNotifier(name string) {
	se.notifierMu.Lock()
	defer se.notifierMu.Unlock()
	delete(se.notifiers, name)
}

func (se *SchemaEngine) broadcast(created, altered, dropped []*Table, udfsChanged bool) {
	se.notifierMu.Lock()
	defer se.notifierMu.Unlock()
	s := maps.Clone(se.tables)
	for _, f := range se.notifiers {
		f(s, created, altered, dropped, udfsChanged)
	}
}

type messageManager struct{ name string }

func (mm *messageManager) Close() { fmt.Println("closing message manager", mm.name) }

type MessagerEngine struct {
	// openMu serializes Open and Close; mu protects the fields below.
	openMu   sync.Mutex
	mu       sync.Mutex
	isOpen   bool
	se       *SchemaEngine
	managers map[string]*messageManager
}

func (me *MessagerEngine) Open() {
	me.openMu.Lock()
	defer me.openMu.Unlock()
	me.mu.Lock()
	me.isOpen = true
	me.mu.Unlock()
	me.se.RegisterNotifier("messages", me.schemaChanged)
}

func (me *MessagerEngine) schemaChanged(tables map[string]*Table, created, altered, dropped []*Table, udfsChanged bool) {
	me.mu.Lock()
	defer me.mu.Unlock()
	for _, t := range append(created, altered...) {
		if t.Type == Message {
			me.managers[t.Name] = &messageManager{name: t.Name}
		}
	}
}

func (me *MessagerEngine) Close() {
	me.openMu.Lock()
	defer me.openMu.Unlock()
	me.mu.Lock()
	if !me.isOpen {
		me.mu.Unlock()
		return
	}
	me.isOpen = false
	me.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	me.se.UnregisterNotifier("messages")

	me.mu.Lock()
	defer me.mu.Unlock()
	for _, mm := range me.managers {
		mm.Close()
	}
	me.managers = make(map[string]*messageManager)
}

func main() {
	se := &SchemaEngine{tables: map[string]*Table{}, notifiers: map[string]notifier{}}
	me := &MessagerEngine{se: se, managers: map[string]*messageManager{}}
	me.Open()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); me.Close() }() // DemotePrimary
	go func() {
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		se.broadcast([]*Table{{Name: "msg_queue", Type: Message}}, nil, nil, false) // schema reload
	}()
	wg.Wait()
	fmt.Println("messager closed")
}
