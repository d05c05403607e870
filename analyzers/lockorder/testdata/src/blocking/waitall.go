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
