// Project: hibiken/asynq
// Bug: Server.Shutdown held srv.state.mu while shutting down the processor (which waits for in-flight workers); a finishing worker blocks handing its message to the heartbeater on the unbuffered finished channel, and the heartbeater is stuck in beat() waiting for state.mu to read the server status.
// Fix: Shutdown flips the state to closed under state.mu and releases it before stopping the forwarder, processor and heartbeater.
package b25asynqshutdown_fixed

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

type serverStateValue int

const (
	srvStateNew serverStateValue = iota
	srvStateActive
	srvStateStopped
	srvStateClosed
)

func (s serverStateValue) String() string {
	return [...]string{"new", "active", "stopped", "closed"}[s]
}

type serverState struct {
	mu    sync.Mutex
	value serverStateValue
}

type Task struct {
	typename string
	payload  []byte
}

type Handler interface {
	ProcessTask(context.Context, *Task) error
}

type HandlerFunc func(context.Context, *Task) error

func (fn HandlerFunc) ProcessTask(ctx context.Context, t *Task) error { return fn(ctx, t) }

type heartbeater struct {
	state    *serverState
	interval time.Duration
	workers  map[string]*Task
	starting <-chan *Task
	finished <-chan *Task
	done     chan struct{}
	lastBeat string
}

func (h *heartbeater) start(wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		timer := time.NewTimer(h.interval)
		for {
			select {
			case <-h.done:
				return
			case <-timer.C:
				h.beat()
				timer.Reset(h.interval)
			case t := <-h.starting:
				h.workers[t.typename] = t
			case t := <-h.finished:
				delete(h.workers, t.typename)
			}
		}
	}()
}

func (h *heartbeater) beat() {
	h.state.mu.Lock()
	srvStatus := h.state.value.String()
	h.state.mu.Unlock()
	h.lastBeat = fmt.Sprintf("status=%s active_workers=%d", srvStatus, len(h.workers))
}

func (h *heartbeater) shutdown() { close(h.done) }

type processor struct {
	handler  Handler
	queue    chan *Task
	starting chan<- *Task
	finished chan<- *Task
	quit     chan struct{}
	wg       sync.WaitGroup
}

func (p *processor) start() {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case <-p.quit:
				return
			case t := <-p.queue:
				p.wg.Add(1)
				go p.exec(t)
			}
		}
	}()
}

func (p *processor) exec(t *Task) {
	defer p.wg.Done()
	p.starting <- t
	_ = p.handler.ProcessTask(context.Background(), t)
	p.finished <- t
}

func (p *processor) shutdown() {
	close(p.quit)
	p.wg.Wait()
}

type Server struct {
	state       *serverState
	wg          sync.WaitGroup
	processor   *processor
	heartbeater *heartbeater
}

func NewServer(h Handler, queue chan *Task) *Server {
	state := &serverState{value: srvStateNew}
	starting := make(chan *Task)
	finished := make(chan *Task)
	return &Server{
		state:       state,
		processor:   &processor{handler: h, queue: queue, starting: starting, finished: finished, quit: make(chan struct{})},
		heartbeater: &heartbeater{state: state, interval: 10 * time.Millisecond, workers: map[string]*Task{}, starting: starting, finished: finished, done: make(chan struct{})},
	}
}

func (srv *Server) Start() error {
	srv.state.mu.Lock()
	defer srv.state.mu.Unlock()
	if srv.state.value != srvStateNew {
		return fmt.Errorf("asynq: server is %s", srv.state.value)
	}
	srv.state.value = srvStateActive
	srv.heartbeater.start(&srv.wg)
	srv.processor.start()
	return nil
}

func (srv *Server) Shutdown() {
	srv.state.mu.Lock()
	if srv.state.value == srvStateNew || srv.state.value == srvStateClosed {
		srv.state.mu.Unlock()
		return
	}
	srv.state.value = srvStateClosed
	srv.state.mu.Unlock()

	srv.processor.shutdown()
	srv.heartbeater.shutdown()
	srv.wg.Wait()
}

func TestProbe(t *testing.T) {
	queue := make(chan *Task, 1)
	started := make(chan struct{})
	srv := NewServer(HandlerFunc(func(ctx context.Context, task *Task) error {
		close(started)
		time.Sleep(30 * time.Millisecond)
		return nil
	}), queue)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	queue <- &Task{typename: "email:deliver", payload: []byte(`{"id":42}`)}
	<-started
	srv.Shutdown()
}
