// Project: istio (pilot/pkg/xds: pushqueue.go, discovery.go, ads.go).
//
// Bug (approximate): the push sender loop (DiscoveryServer.doSendPushes) read the
// global PushContext under s.updateMutex.RLock() and kept that read lock while it
// called PushQueue.Dequeue(), which blocks in sync.Cond.Wait until a connection is
// enqueued. Connections are enqueued by DiscoveryServer.Push -> AdsPushAll ->
// startPush -> PushQueue.Enqueue, but Push first installs the new PushContext
// under s.updateMutex.Lock(). The sender sleeps on the cond holding the read lock,
// the pusher waits for the write lock and never signals the cond: istiod stops
// pushing config to every proxy.
// Fix: Dequeue first, then take the read lock only to snapshot the PushContext.
package istiopushqueue

import (
	"sync"
	"testing"
	"time"
)

type PushContext struct {
	PushVersion string
}

type PushRequest struct {
	Full           bool
	Push           *PushContext
	ConfigsUpdated map[string]struct{}
}

func (pr *PushRequest) Merge(other *PushRequest) *PushRequest {
	if pr == nil {
		return other
	}
	merged := &PushRequest{Full: pr.Full || other.Full, Push: other.Push, ConfigsUpdated: map[string]struct{}{}}
	for k := range pr.ConfigsUpdated {
		merged.ConfigsUpdated[k] = struct{}{}
	}
	for k := range other.ConfigsUpdated {
		merged.ConfigsUpdated[k] = struct{}{}
	}
	return merged
}

type Event struct {
	pushRequest *PushRequest
	push        *PushContext
}

type Connection struct {
	conID       string
	pushChannel chan *Event
}

// PushQueue is pilot's push queue.
type PushQueue struct {
	cond         *sync.Cond
	pending      map[*Connection]*PushRequest
	queue        []*Connection
	processing   map[*Connection]*PushRequest
	shuttingDown bool
}

func NewPushQueue() *PushQueue {
	return &PushQueue{
		pending:    make(map[*Connection]*PushRequest),
		processing: make(map[*Connection]*PushRequest),
		cond:       sync.NewCond(&sync.Mutex{}),
	}
}

func (p *PushQueue) Enqueue(con *Connection, pushRequest *PushRequest) {
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	if p.shuttingDown {
		return
	}
	if request, f := p.processing[con]; f {
		p.processing[con] = request.Merge(pushRequest)
		return
	}
	if request, f := p.pending[con]; f {
		p.pending[con] = request.Merge(pushRequest)
		return
	}
	p.pending[con] = pushRequest
	p.queue = append(p.queue, con)
	p.cond.Signal()
}

func (p *PushQueue) Dequeue() (con *Connection, request *PushRequest, shutdown bool) {
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	for len(p.queue) == 0 && !p.shuttingDown {
		p.cond.Wait() // DEADLOCK HERE (sender sleeps on the cond while holding updateMutex.RLock)
	}
	if len(p.queue) == 0 {
		return nil, nil, true
	}
	con = p.queue[0]
	p.queue[0] = nil
	p.queue = p.queue[1:]
	request = p.pending[con]
	delete(p.pending, con)
	p.processing[con] = nil
	return con, request, false
}

func (p *PushQueue) MarkDone(con *Connection) {
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	request := p.processing[con]
	delete(p.processing, con)
	if request != nil {
		p.pending[con] = request
		p.queue = append(p.queue, con)
		p.cond.Signal()
	}
}

func (p *PushQueue) ShutDown() {
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	p.shuttingDown = true
	p.cond.Broadcast()
}

type Environment struct {
	PushContext *PushContext
}

type DiscoveryServer struct {
	Env             *Environment
	updateMutex     sync.RWMutex
	adsClientsMutex sync.RWMutex
	adsClients      map[string]*Connection
	pushQueue       *PushQueue
}

func NewDiscoveryServer() *DiscoveryServer {
	return &DiscoveryServer{
		Env:        &Environment{PushContext: &PushContext{PushVersion: "initial"}},
		adsClients: map[string]*Connection{},
		pushQueue:  NewPushQueue(),
	}
}

func (s *DiscoveryServer) addCon(conID string) *Connection {
	con := &Connection{conID: conID, pushChannel: make(chan *Event, 1)}
	s.adsClientsMutex.Lock()
	s.adsClients[conID] = con
	s.adsClientsMutex.Unlock()
	return con
}

func (s *DiscoveryServer) AllClients() []*Connection {
	s.adsClientsMutex.RLock()
	defer s.adsClientsMutex.RUnlock()
	out := make([]*Connection, 0, len(s.adsClients))
	for _, c := range s.adsClients {
		out = append(out, c)
	}
	return out
}

// nextPush returns the next connection to push to, together with the
// PushContext to use.
func (s *DiscoveryServer) nextPush(queue *PushQueue) (*Connection, *PushRequest, *PushContext, bool) {
	s.updateMutex.RLock()
	defer s.updateMutex.RUnlock()
	push := s.Env.PushContext
	client, info, shuttingdown := queue.Dequeue()
	return client, info, push, shuttingdown
}

func (s *DiscoveryServer) doSendPushes(stopCh <-chan struct{}, queue *PushQueue) {
	for {
		select {
		case <-stopCh:
			return
		default:
		}
		client, info, push, shuttingdown := s.nextPush(queue)
		if shuttingdown {
			return
		}
		if info.Push != nil {
			push = info.Push
		}
		client.pushChannel <- &Event{pushRequest: info, push: push}
		queue.MarkDone(client)
	}
}

// Push is called (after debouncing) for every config change.
func (s *DiscoveryServer) Push(req *PushRequest) {
	s.updateMutex.Lock() // DEADLOCK HERE (pusher wants the write lock; the sender holds the read lock in Wait)
	s.Env.PushContext = &PushContext{PushVersion: time.Now().Format(time.RFC3339Nano)}
	req.Push = s.Env.PushContext
	s.updateMutex.Unlock()
	s.AdsPushAll(req)
}

func (s *DiscoveryServer) AdsPushAll(req *PushRequest) {
	s.startPush(req)
}

func (s *DiscoveryServer) startPush(req *PushRequest) {
	for _, p := range s.AllClients() {
		s.pushQueue.Enqueue(p, req)
	}
}

func (s *DiscoveryServer) ConfigUpdate(req *PushRequest) {
	// debounce() collapses events and then calls Push.
	s.Push(req)
}

func TestConfigUpdateReachesProxy(t *testing.T) {
	s := NewDiscoveryServer()
	con := s.addCon("sidecar~10.0.0.1~productpage-v1.default~default.svc.cluster.local-1")
	stop := make(chan struct{})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.doSendPushes(stop, s.pushQueue)
	}()
	time.Sleep(10 * time.Millisecond)
	go func() { // config controller event -> debounce -> Push
		defer wg.Done()
		s.ConfigUpdate(&PushRequest{Full: true, ConfigsUpdated: map[string]struct{}{"VirtualService/default/reviews": {}}})
	}()

	ev := <-con.pushChannel // the ADS stream goroutine would send this to Envoy
	if ev.push == nil || ev.push.PushVersion == "initial" {
		t.Errorf("pushed stale PushContext %+v", ev.push)
	}
	close(stop)
	s.pushQueue.ShutDown()
	wg.Wait()
}
