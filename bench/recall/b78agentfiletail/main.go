// Project: grafana/agent Flow (component/loki/source/file/file.go, tailer.go), v0.32 development, March 2023.
// Bug: Component.Update took c.mut (write) and then stopped the old readers; a stopping tailer flushes its
// last lines through the labels middleware into the component's handler channel, but the Run goroutine that
// drains that channel needs c.mut.RLock before forwarding each entry, so the flush, the tailer Stop, Update
// and Run all wait on each other (PR #3298 "loki.source.file: fix deadlock": stop readers before taking c.mut).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ---- component/common/loki ----

type Entry struct {
	Labels map[string]string
	Line   string
	Time   time.Time
}

type LogsReceiver chan Entry

func NewLogsReceiver() LogsReceiver { return make(chan Entry) }

func (r LogsReceiver) Chan() chan Entry { return r }

type EntryHandler interface {
	Chan() chan<- Entry
	Stop()
}

type entryHandler struct {
	entries chan<- Entry
	stop    func()
}

func NewEntryHandler(entries chan<- Entry, stop func()) EntryHandler {
	return entryHandler{entries: entries, stop: stop}
}
func (e entryHandler) Chan() chan<- Entry { return e.entries }
func (e entryHandler) Stop()              { e.stop() }

// AddLabelsMiddleware wraps a handler with a goroutine that adds the target labels.
type labelsMiddleware map[string]string

func AddLabelsMiddleware(ls map[string]string) labelsMiddleware { return labelsMiddleware(ls) }

func (ls labelsMiddleware) Wrap(next EntryHandler) EntryHandler {
	in := make(chan Entry)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := range in {
			e.Labels = ls
			next.Chan() <- e
		}
	}()
	var once sync.Once
	return NewEntryHandler(in, func() { once.Do(func() { close(in); wg.Wait() }) })
}

// ---- component/loki/source/file ----

type reader interface {
	Stop()
	IsRunning() bool
}

// tailer follows one file; lines read since the last poll are kept in
// pending and are flushed to the handler when the tailer is stopped.
type tailer struct {
	handler EntryHandler
	path    string
	pending []string
	quit    chan struct{}
	done    chan struct{}
}

func newTailer(handler EntryHandler, path string, pending []string) *tailer {
	t := &tailer{handler: handler, path: path, pending: pending, quit: make(chan struct{}), done: make(chan struct{})}
	go t.readLines()
	return t
}

func (t *tailer) readLines() {
	defer close(t.done)
	<-t.quit
	for _, line := range t.pending { // flush what is left before exiting
		t.handler.Chan() <- Entry{Line: line, Time: time.Now()}
	}
}

func (t *tailer) Stop() {
	close(t.quit)
	<-t.done
	t.handler.Stop()
}

func (t *tailer) IsRunning() bool {
	select {
	case <-t.done:
		return false
	default:
		return true
	}
}

type Arguments struct {
	Targets   []map[string]string
	ForwardTo []LogsReceiver
}

type Component struct {
	mut       sync.RWMutex
	args      Arguments
	handler   LogsReceiver
	receivers []LogsReceiver
	readers   map[string]reader
}

func (c *Component) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case entry := <-c.handler.Chan():
			c.mut.RLock()
			for _, receiver := range c.receivers {
				receiver.Chan() <- entry
			}
			c.mut.RUnlock()
		}
	}
}

func (c *Component) Update(args Arguments) error {
	c.mut.Lock()
	defer c.mut.Unlock()

	// Stop all readers so we can recreate them below.
	for _, r := range c.readers {
		r.Stop()
	}

	c.args = args
	c.receivers = args.ForwardTo
	c.readers = make(map[string]reader)
	for _, target := range args.Targets {
		path := target["__path__"]
		labels := map[string]string{"filename": path, "job": target["job"]}
		handler := AddLabelsMiddleware(labels).Wrap(NewEntryHandler(c.handler.Chan(), func() {}))
		c.readers[path] = newTailer(handler, path, []string{"line 41", "line 42", "line 43"})
	}
	return nil
}

func main() {
	write := make(LogsReceiver, 100) // loki.write receiver
	c := &Component{handler: NewLogsReceiver(), readers: map[string]reader{}}
	if err := c.Update(Arguments{Targets: []map[string]string{{"__path__": "/var/log/app.log", "job": "app"}}, ForwardTo: []LogsReceiver{write}}); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan struct{})
	go func() { c.Run(ctx); close(runDone) }()

	// discovery.file reports a new set of targets: the old tailer is replaced.
	if err := c.Update(Arguments{Targets: []map[string]string{{"__path__": "/var/log/app.log", "job": "app-v2"}}, ForwardTo: []LogsReceiver{write}}); err != nil {
		panic(err)
	}
	fmt.Println("updated; forwarded entries:", len(write))
	cancel()
	<-runDone
}
