// Project: elastic/beats (filebeat/harvester/registry.go, filebeat/input/log)
// Bug: Registry.Stop holds the registry lock while it stops every harvester and
// waits on r.wg; each harvester goroutine started by Registry.Start removes
// itself with r.remove (which needs r.Lock) before calling r.wg.Done, so Stop
// waits forever for goroutines that wait for its lock.
// Fix: snapshot the harvesters under the lock and stop/wait without holding it.
package main

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

var ErrHarvesterLimit = errors.New("harvester limit reached")

type Harvester interface {
	ID() string
	Run() error
	Stop()
}

type Registry struct {
	sync.RWMutex
	harvesters map[string]Harvester
	wg         sync.WaitGroup
	limit      int
}

func NewRegistry(limit int) *Registry {
	return &Registry{harvesters: make(map[string]Harvester), limit: limit}
}

func (r *Registry) remove(h Harvester) {
	r.Lock()
	defer r.Unlock()
	delete(r.harvesters, h.ID())
}

func (r *Registry) add(h Harvester) error {
	r.Lock()
	defer r.Unlock()
	if r.limit > 0 && len(r.harvesters) >= r.limit {
		return ErrHarvesterLimit
	}
	r.harvesters[h.ID()] = h
	return nil
}

func (r *Registry) Len() uint64 {
	r.RLock()
	defer r.RUnlock()
	return uint64(len(r.harvesters))
}

func (r *Registry) Start(h Harvester) error {
	if err := r.add(h); err != nil {
		return err
	}
	r.wg.Add(1)
	go func() {
		defer func() {
			r.remove(h)
			r.wg.Done()
		}()
		if err := h.Run(); err != nil {
			log.Printf("harvester %s: %v", h.ID(), err)
		}
	}()
	return nil
}

func (r *Registry) Stop() {
	r.Lock()
	defer r.Unlock()
	for _, hv := range r.harvesters {
		r.wg.Add(1)
		go func(h Harvester) {
			defer r.wg.Done()
			h.Stop()
		}(hv)
	}
	r.wg.Wait()
}

type Source struct {
	Path  string
	lines chan string
}

func (s *Source) Name() string { return s.Path }

type logHarvester struct {
	id        string
	source    *Source
	offset    int64
	done      chan struct{}
	stopOnce  sync.Once
	stoppedCh chan struct{}
	publish   func(line string, offset int64)
}

func NewHarvester(id string, src *Source, publish func(string, int64)) *logHarvester {
	return &logHarvester{id: id, source: src, done: make(chan struct{}), stoppedCh: make(chan struct{}), publish: publish}
}

func (h *logHarvester) ID() string { return h.id }
func (h *logHarvester) String() string {
	return fmt.Sprintf("harvester[%s] %s@%d", h.id, h.source.Name(), h.offset)
}

func (h *logHarvester) Run() error {
	defer close(h.stoppedCh)
	for {
		select {
		case <-h.done:
			log.Printf("stopping %v", h)
			return nil
		case line, ok := <-h.source.lines:
			if !ok {
				return nil
			}
			h.offset += int64(len(line)) + 1
			h.publish(line, h.offset)
		}
	}
}

func (h *logHarvester) Stop() {
	h.stopOnce.Do(func() { close(h.done) })
	<-h.stoppedCh
}

type publisher struct {
	mu     sync.Mutex
	events int
}

func (p *publisher) Publish(line string, offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events++
}

func main() {
	reg := NewRegistry(10)
	pub := &publisher{}
	for i, path := range []string{"/var/log/syslog", "/var/log/auth.log"} {
		src := &Source{Path: path, lines: make(chan string, 4)}
		src.lines <- "Jan 1 00:00:00 host sshd[1]: started"
		h := NewHarvester(fmt.Sprintf("h-%d", i), src, pub.Publish)
		if err := reg.Start(h); err != nil {
			log.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	fmt.Println("running harvesters:", reg.Len())
	reg.Stop()
	fmt.Println("all harvesters stopped, remaining:", reg.Len())
}
