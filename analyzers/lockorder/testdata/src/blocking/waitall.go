package blocking

import "sync"

// A WaitGroup.Wait needs every Done: a goroutine that takes the lock
// before its Done blocks a Wait made under that lock, whatever the other
// goroutines of the group do (a reader's Close waiting, under its lock,
// for the consumer-group loop that subscribes under it, beside partition
// readers that never lock).
type GroupReader struct {
	mu      sync.Mutex
	join    sync.WaitGroup
	stop    chan struct{}
	parts   int
	version int
}

func NewReader() *GroupReader {
	r := &GroupReader{stop: make(chan struct{})}
	r.join.Add(2)
	go r.run()
	go r.partition()
	return r
}

func (r *GroupReader) run() {
	defer r.join.Done()
	for {
		select {
		case <-r.stop:
			return
		default:
		}
		r.subscribe()
	}
}

func (r *GroupReader) subscribe() {
	r.mu.Lock()
	r.version++
	r.mu.Unlock()
}

func (r *GroupReader) partition() {
	defer r.join.Done()
	<-r.stop
}

func (r *GroupReader) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.stop)
	r.join.Wait() // want `GroupReader.mu \(taken at waitall.go:50\) is held across a WaitGroup.Wait; the goroutine started by the go statement, which would unblock it, also takes GroupReader.mu \[blocking-held\]`
}

// Correct: no goroutine of the group takes the lock.
type Fetcher struct {
	mu    sync.Mutex
	wg    sync.WaitGroup
	stop  chan struct{}
	count int
}

func NewFetcher() *Fetcher {
	f := &Fetcher{stop: make(chan struct{})}
	f.wg.Add(2)
	go f.fetch()
	go f.fetch()
	return f
}

func (f *Fetcher) fetch() {
	defer f.wg.Done()
	<-f.stop
}

func (f *Fetcher) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.stop)
	f.wg.Wait()
	f.count = 0
}

// A worker whose deferred cleanup unregisters it under the registry's
// lock and then calls Done: the take comes before the Done, so a Stop
// waiting for the group under that lock waits forever, whatever the
// stoppers it adds to the group do.
type Registry struct {
	sync.RWMutex
	wg      sync.WaitGroup
	workers map[int]chan struct{}
}

func (r *Registry) remove(id int) {
	r.Lock()
	defer r.Unlock()
	delete(r.workers, id)
}

func (r *Registry) Start(id int) {
	done := make(chan struct{})
	r.Lock()
	r.workers[id] = done
	r.Unlock()
	r.wg.Add(1)
	go func() {
		defer func() {
			r.remove(id)
			r.wg.Done()
		}()
		<-done
	}()
}

func (r *Registry) Stop() {
	r.Lock()
	defer r.Unlock()
	for _, done := range r.workers {
		r.wg.Add(1)
		go func(done chan struct{}) {
			defer r.wg.Done()
			close(done)
		}(done)
	}
	r.wg.Wait() // want `Registry.RWMutex \(taken at waitall.go:\d+\) is held across a WaitGroup.Wait; the goroutine started by the go statement, which would unblock it, also takes Registry.RWMutex \[blocking-held\]`
}

// Correct: the cleanup calls Done first; its take no longer holds up
// the Wait (the Stop then unlocks and the take proceeds).
type Pool struct {
	sync.Mutex
	wg    sync.WaitGroup
	stops map[int]chan struct{}
}

func (p *Pool) remove(id int) {
	p.Lock()
	defer p.Unlock()
	delete(p.stops, id)
}

func (p *Pool) Start(id int) {
	stop := make(chan struct{})
	p.Lock()
	p.stops[id] = stop
	p.Unlock()
	p.wg.Add(1)
	go func() {
		defer func() {
			p.wg.Done()
			p.remove(id)
		}()
		<-stop
	}()
}

func (p *Pool) Stop() {
	p.Lock()
	defer p.Unlock()
	for _, stop := range p.stops {
		p.wg.Add(1)
		go func(stop chan struct{}) {
			defer p.wg.Done()
			close(stop)
		}(stop)
	}
	p.wg.Wait()
}
