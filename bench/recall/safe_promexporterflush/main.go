// Modelled on prometheus' remote-write QueueManager / pushgateway pushers:
// a registry gathers samples under its mutex and hands them to every
// registered Exporter, then calls Flush. The queue exporter's Flush sends a
// request to its worker goroutine and waits for the reply; the worker only
// touches the exporter's own state and never calls back into the registry,
// so blocking in Flush while r.mu is held cannot deadlock.
package main

import (
	"fmt"
	"sync"
)

type Sample struct {
	Name  string
	Value float64
}

type Exporter interface {
	Export([]Sample)
	Flush()
}

// logExporter is synchronous.
type logExporter struct {
	mu    sync.Mutex
	count int
}

func (l *logExporter) Export(s []Sample) { l.mu.Lock(); l.count += len(s); l.mu.Unlock() }
func (l *logExporter) Flush()            {}

// queueExporter batches in a worker goroutine.
type queueExporter struct {
	samples chan []Sample
	flushc  chan chan struct{}
	quit    chan struct{}
	done    chan struct{}

	mu   sync.Mutex // guards sent; used by the worker only (and tests)
	sent int
}

func newQueueExporter(capacity int) *queueExporter {
	q := &queueExporter{
		samples: make(chan []Sample, capacity),
		flushc:  make(chan chan struct{}),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go q.run()
	return q
}

func (q *queueExporter) Export(s []Sample) { q.samples <- s }

func (q *queueExporter) Flush() {
	ack := make(chan struct{})
	q.flushc <- ack
	<-ack // waits for the worker
}

func (q *queueExporter) run() {
	defer close(q.done)
	var pending []Sample
	send := func() {
		q.mu.Lock()
		q.sent += len(pending)
		q.mu.Unlock()
		pending = pending[:0]
	}
	for {
		select {
		case s := <-q.samples:
			pending = append(pending, s...)
		case ack := <-q.flushc:
			for drained := false; !drained; {
				select {
				case s := <-q.samples:
					pending = append(pending, s...)
				default:
					drained = true
				}
			}
			send()
			close(ack)
		case <-q.quit:
			return
		}
	}
}

func (q *queueExporter) Stop() { close(q.quit); <-q.done }

type Registry struct {
	mu        sync.Mutex
	counters  map[string]float64
	exporters []Exporter
}

func (r *Registry) Inc(name string) {
	r.mu.Lock()
	r.counters[name]++
	r.mu.Unlock()
}

func (r *Registry) Push() {
	r.mu.Lock()
	defer r.mu.Unlock()
	batch := make([]Sample, 0, len(r.counters))
	for n, v := range r.counters {
		batch = append(batch, Sample{n, v})
	}
	for _, e := range r.exporters {
		e.Export(batch)
		e.Flush() // queueExporter.Flush blocks on its worker
	}
}

func main() {
	le, qe := &logExporter{}, newQueueExporter(4)
	r := &Registry{counters: map[string]float64{}, exporters: []Exporter{le, qe}}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				r.Inc(fmt.Sprintf("http_requests_total{code=\"%d\"}", 200+g))
			}
		}(g)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				r.Push()
			}
		}()
	}
	wg.Wait()
	qe.Stop()
	qe.mu.Lock()
	le.mu.Lock()
	fmt.Println("log exporter:", le.count, "queue exporter:", qe.sent)
	le.mu.Unlock()
	qe.mu.Unlock()
}
