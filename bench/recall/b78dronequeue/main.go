// Project: harness/drone (scheduler/queue/queue.go), Drone 2.x, fixed July 2023 (PR #3329, merged as #3330).
// Bug: queue.signal holds the global queue mutex while it hands a pending stage to a waiting runner with a
// blocking send on the worker's unbuffered channel; if that runner's Request context is cancelled just
// before the send, Request takes the ctx.Done branch and blocks on the same mutex to delete its worker, so
// signal never returns and every later Request, Pause and Resume hangs on the queue mutex.
package main

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

type Stage struct {
	ID, RepoID                          int64
	Name, Kind, Type, OS, Arch, Machine string
	Status                              string
	Labels                              map[string]string
}

type Filter struct {
	Kind, Type, OS, Arch string
	Labels               map[string]string
}

type StageStore interface {
	ListIncomplete(ctx context.Context) ([]*Stage, error)
}

type worker struct {
	kind, typ, os, arch string
	labels              map[string]string
	channel             chan *Stage
}

type queue struct {
	sync.Mutex

	ready    chan struct{}
	paused   bool
	interval time.Duration
	store    StageStore
	workers  map[*worker]struct{}
	ctx      context.Context
}

func newQueue(store StageStore) *queue {
	q := &queue{
		store:    store,
		ready:    make(chan struct{}, 1),
		workers:  map[*worker]struct{}{},
		interval: time.Minute,
		ctx:      context.Background(),
	}
	go q.start()
	return q
}

func (q *queue) Request(ctx context.Context, params Filter) (*Stage, error) {
	w := &worker{
		kind:    params.Kind,
		typ:     params.Type,
		os:      params.OS,
		arch:    params.Arch,
		labels:  params.Labels,
		channel: make(chan *Stage),
	}
	q.Lock()
	q.workers[w] = struct{}{}
	q.Unlock()

	select {
	case q.ready <- struct{}{}:
	default:
	}

	select {
	case <-ctx.Done():
		q.Lock() // BUG: signal may hold q while blocked on w.channel
		delete(q.workers, w)
		q.Unlock()
		return nil, ctx.Err()
	case b := <-w.channel:
		return b, nil
	}
}

func (q *queue) signal(ctx context.Context) error {
	q.Lock()
	count := len(q.workers)
	pause := q.paused
	q.Unlock()
	if pause || count == 0 {
		return nil
	}
	items, err := q.store.ListIncomplete(ctx)
	if err != nil {
		return err
	}

	q.Lock()
	defer q.Unlock()
	for _, item := range items {
		if item.Status == "running" || item.Machine != "" {
			continue
		}
	loop:
		for w := range q.workers {
			if !matchResource(w.kind, w.typ, item.Kind, item.Type) {
				continue
			}
			if w.os != "" || w.arch != "" {
				if w.os != item.OS || w.arch != item.Arch {
					continue
				}
			}
			if len(item.Labels) > 0 || len(w.labels) > 0 {
				if !checkLabels(item.Labels, w.labels) {
					continue
				}
			}
			w.channel <- item // blocks with q held
			delete(q.workers, w)
			break loop
		}
	}
	return nil
}

func (q *queue) start() error {
	for {
		select {
		case <-q.ctx.Done():
			return q.ctx.Err()
		case <-q.ready:
			q.signal(q.ctx)
		case <-time.After(q.interval):
			q.signal(q.ctx)
		}
	}
}

func checkLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

func matchResource(kinda, typea, kindb, typeb string) bool {
	def := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	return def(kinda, "pipeline") == def(kindb, "pipeline") && def(typea, "docker") == def(typeb, "docker")
}

// stageStore stands in for the database. The runner gives up (its RPC
// context is cancelled) while the incomplete stages are being listed.
type stageStore struct{ onList func() }

func (s *stageStore) ListIncomplete(ctx context.Context) ([]*Stage, error) {
	s.onList()
	return []*Stage{{ID: 1, RepoID: 1, Name: "build", Status: "pending", OS: "linux", Arch: "amd64"}}, nil
}

func main() {
	runtime.GOMAXPROCS(1)
	ctx, cancel := context.WithCancel(context.Background())
	q := newQueue(&stageStore{onList: cancel})

	done := make(chan error)
	go func() {
		_, err := q.Request(ctx, Filter{Kind: "pipeline", Type: "docker", OS: "linux", Arch: "amd64"})
		done <- err
	}()
	fmt.Println("runner finished:", <-done)
	q.Lock() // e.g. Pause or the next Request
	q.paused = true
	q.Unlock()
	fmt.Println("queue paused")
}
