// Project: kubernetes (client-go/tools/cache/shared_informer.go)
// Bug: sharedProcessor.distribute held listenersLock (read) while handing the
// notification to each processorListener over an unbuffered channel. A
// handler that registered another handler from inside OnAdd
// (AddEventHandler -> addListener -> listenersLock.Lock) stopped the
// listener's run loop, so distribute blocked on the send with the lock held.
// Fixed by the unbounded pendingNotifications buffer in listener.pop.
package main

import (
	"sync"
	"time"
)

type ResourceEventHandler interface {
	OnAdd(obj interface{})
}

// ResourceEventHandlerFuncs adapts plain funcs to ResourceEventHandler.
type ResourceEventHandlerFuncs struct {
	AddFunc func(obj interface{})
}

func (r ResourceEventHandlerFuncs) OnAdd(obj interface{}) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

type processorListener struct {
	addCh   chan interface{}
	handler ResourceEventHandler
}

func newProcessListener(h ResourceEventHandler) *processorListener {
	return &processorListener{addCh: make(chan interface{}), handler: h}
}

func (p *processorListener) add(notification interface{}) {
	p.addCh <- notification
}

func (p *processorListener) run() {
	for obj := range p.addCh {
		p.handler.OnAdd(obj)
	}
}

type sharedProcessor struct {
	listenersLock sync.RWMutex
	listeners     []*processorListener
}

func (p *sharedProcessor) addListener(l *processorListener) {
	p.listenersLock.Lock()
	defer p.listenersLock.Unlock()
	p.listeners = append(p.listeners, l)
	go l.run()
}

func (p *sharedProcessor) distribute(obj interface{}) {
	p.listenersLock.RLock()
	defer p.listenersLock.RUnlock()
	for _, listener := range p.listeners {
		listener.add(obj) // blocks until listener.run picks it up
	}
}

type sharedIndexInformer struct {
	processor *sharedProcessor
}

func NewSharedIndexInformer() *sharedIndexInformer {
	return &sharedIndexInformer{processor: &sharedProcessor{}}
}

func (s *sharedIndexInformer) AddEventHandler(h ResourceEventHandler) {
	s.processor.addListener(newProcessListener(h))
}

func (s *sharedIndexInformer) HandleDeltas(objs []interface{}) {
	for _, obj := range objs {
		s.processor.distribute(obj)
	}
}

func main() {
	informer := NewSharedIndexInformer()
	informer.AddEventHandler(ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			// lazily register a second handler on the first add
			informer.AddEventHandler(ResourceEventHandlerFuncs{})
		},
	})
	go informer.HandleDeltas([]interface{}{"pod-a", "pod-b", "pod-c"})
	time.Sleep(time.Second)
}
