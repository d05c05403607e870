// Project: Ollama, component: server/sched.go (model runner Scheduler).
// Bug (as remembered; the exact early return may have differed): Scheduler.load
// took s.loadedMu up front to reserve the model slot, then started the runner
// with s.newServerFn. When starting the runner failed (incompatible model,
// out of memory, missing GPU library) it reported the error on req.errCh and
// returned without releasing s.loadedMu. The next request processed by
// processPending, the completion handler processCompleted and the expiry path
// all block on s.loadedMu, so every subsequent /api/generate hung after one
// failed load. The fix released the lock on the error path.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type LlamaServer interface {
	Close() error
}

type llamaServer struct{ model string }

func (s *llamaServer) Close() error { return nil }

type LlmRequest struct {
	ctx             context.Context
	model           string
	successCh       chan *runnerRef
	errCh           chan error
	sessionDuration time.Duration
}

type runnerRef struct {
	refMu    sync.Mutex
	refCount uint
	llama    LlamaServer
	model    string
}

type Scheduler struct {
	pendingReqCh  chan *LlmRequest
	finishedReqCh chan *LlmRequest

	loadedMu sync.Mutex
	loaded   map[string]*runnerRef

	newServerFn func(model string) (LlamaServer, error)
}

func InitScheduler() *Scheduler {
	return &Scheduler{
		pendingReqCh:  make(chan *LlmRequest, 8),
		finishedReqCh: make(chan *LlmRequest, 8),
		loaded:        map[string]*runnerRef{},
		newServerFn: func(model string) (LlamaServer, error) {
			if model == "broken" {
				return nil, errors.New("unable to load model: unknown architecture")
			}
			return &llamaServer{model: model}, nil
		},
	}
}

func (s *Scheduler) GetRunner(ctx context.Context, model string) (chan *runnerRef, chan error) {
	req := &LlmRequest{ctx: ctx, model: model, successCh: make(chan *runnerRef, 1), errCh: make(chan error, 1)}
	select {
	case s.pendingReqCh <- req:
	default:
		req.errCh <- errors.New("server busy")
	}
	return req.successCh, req.errCh
}

func (s *Scheduler) processPending(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case pending := <-s.pendingReqCh:
			s.loadedMu.Lock() // DEADLOCK HERE
			runner := s.loaded[pending.model]
			s.loadedMu.Unlock()
			if runner != nil {
				runner.refMu.Lock()
				runner.refCount++
				runner.refMu.Unlock()
				pending.successCh <- runner
				continue
			}
			s.load(pending)
		}
	}
}

func (s *Scheduler) load(req *LlmRequest) {
	s.loadedMu.Lock()
	llama, err := s.newServerFn(req.model)
	if err != nil {
		err = fmt.Errorf("%v: this model may be incompatible with your version of Ollama", err)
		req.errCh <- err
		return
	}
	runner := &runnerRef{llama: llama, model: req.model, refCount: 1}
	s.loaded[req.model] = runner
	s.loadedMu.Unlock()
	req.successCh <- runner
}

func (s *Scheduler) processCompleted(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case finished := <-s.finishedReqCh:
			s.loadedMu.Lock()
			runner := s.loaded[finished.model]
			if runner != nil {
				runner.refMu.Lock()
				runner.refCount--
				if runner.refCount == 0 && finished.sessionDuration <= 0 {
					runner.llama.Close()
					delete(s.loaded, finished.model)
				}
				runner.refMu.Unlock()
			}
			s.loadedMu.Unlock()
		}
	}
}

func (s *Scheduler) Run(ctx context.Context) {
	go s.processPending(ctx)
	go s.processCompleted(ctx)
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	s := InitScheduler()
	s.Run(ctx)
	for _, model := range []string{"llama3", "broken", "mistral", "llama3"} {
		go func(model string) {
			successCh, errCh := s.GetRunner(ctx, model)
			select {
			case r := <-successCh:
				fmt.Println("loaded", r.model)
				s.finishedReqCh <- &LlmRequest{model: model}
			case err := <-errCh:
				fmt.Println("error:", err)
			case <-ctx.Done():
				fmt.Println("timed out waiting for", model)
			}
		}(model)
	}
	<-ctx.Done()
}
