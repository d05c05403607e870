package blocking

import (
	"sync"
	"time"
)

// A function handed to sync.Once.Do runs now: its blocking operations are
// the caller's. The renderer's stop signals done from a Once under the
// mutex, while its listen loop, on a tick, flushes under that mutex
// (bubbletea's standardRenderer).
type renderer struct {
	mtx    sync.Mutex
	buf    []string
	done   chan struct{}
	once   sync.Once
	ticker *time.Ticker
}

func (r *renderer) flush() {
	r.mtx.Lock()
	defer r.mtx.Unlock()
	r.buf = r.buf[:0]
}

func (r *renderer) listen() {
	for {
		select {
		case <-r.done:
			r.ticker.Stop()
			return
		case <-r.ticker.C:
			r.flush()
		}
	}
}

func (r *renderer) stop() {
	r.mtx.Lock()
	defer r.mtx.Unlock()
	r.buf = append(r.buf, "\x1b[2K")
	r.once.Do(func() { // want `renderer.mtx \(taken at oncesend.go:39\) is held across a channel send \(in sync.Once.Do -> renderer.stop.func1 at oncesend.go:43\); the goroutine started by the go statement, which would unblock it, also takes renderer.mtx \[blocking-held\]`
		r.done <- struct{}{}
	})
}

func RunRenderer() {
	r := &renderer{done: make(chan struct{}), ticker: time.NewTicker(time.Millisecond)}
	go r.listen()
	r.stop()
}

// The fix: stop the loop before taking the mutex. Silent.
func (r *renderer) stopFirst() {
	r.once.Do(func() {
		r.done <- struct{}{}
	})
	r.mtx.Lock()
	defer r.mtx.Unlock()
	r.buf = append(r.buf, "\x1b[2K")
}

// Closing from the Once does not wait for the loop. Silent.
type painter struct {
	mtx    sync.Mutex
	lines  int
	done   chan struct{}
	once   sync.Once
	ticker *time.Ticker
}

func (p *painter) paint() {
	p.mtx.Lock()
	defer p.mtx.Unlock()
	p.lines++
}

func (p *painter) listen() {
	for {
		select {
		case <-p.done:
			return
		case <-p.ticker.C:
			p.paint()
		}
	}
}

func (p *painter) stop() {
	p.mtx.Lock()
	defer p.mtx.Unlock()
	p.once.Do(func() { close(p.done) })
}

func RunPainter() {
	p := &painter{done: make(chan struct{}), ticker: time.NewTicker(time.Millisecond)}
	go p.listen()
	p.stop()
	r := &renderer{done: make(chan struct{}), ticker: time.NewTicker(time.Millisecond)}
	go r.listen()
	r.stopFirst()
}
