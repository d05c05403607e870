// Project: census-instrumentation/opencensus-go (stats/view/worker.go, worker_commands.go)
// Bug: UnregisterExporter holds w.mu while it sends a flushReq to the worker goroutine
// and waits for the reply; the worker handles the flush by calling reportView,
// which takes w.mu.RLock to iterate the exporters, so it never answers.
// Fix: flush first without holding w.mu, then take the lock only to delete the exporter.
package main

import (
	"fmt"
	"log"
	"sync"
	"time"
)

type Row struct {
	Tags  map[string]string
	Count int64
	Sum   float64
}

type Data struct {
	View       *View
	Start, End time.Time
	Rows       []*Row
}

type Exporter interface {
	ExportView(viewData *Data)
}

type View struct {
	Name        string
	Description string
	Measure     string
}

func (v *View) String() string { return fmt.Sprintf("view(%s on %s)", v.Name, v.Measure) }

type viewInternal struct {
	view *View
	rows map[string]*Row
}

func (v *viewInternal) addSample(tag string, val float64) {
	r, ok := v.rows[tag]
	if !ok {
		r = &Row{Tags: map[string]string{"method": tag}}
		v.rows[tag] = r
	}
	r.Count++
	r.Sum += val
}

func (v *viewInternal) collectedRows() []*Row {
	rows := make([]*Row, 0, len(v.rows))
	for _, r := range v.rows {
		cp := *r
		rows = append(rows, &cp)
	}
	return rows
}

type command interface {
	handleCommand(w *worker)
}

type registerViewReq struct {
	views []*View
	err   chan error
}

func (cmd *registerViewReq) handleCommand(w *worker) {
	for _, v := range cmd.views {
		if _, ok := w.views[v.Name]; ok {
			cmd.err <- fmt.Errorf("cannot register %v: already registered", v)
			return
		}
		vi := &viewInternal{view: v, rows: map[string]*Row{}}
		w.views[v.Name] = vi
		w.startTimes[vi] = time.Now()
	}
	cmd.err <- nil
}

type recordReq struct {
	measure string
	tag     string
	value   float64
}

func (cmd *recordReq) handleCommand(w *worker) {
	for _, v := range w.views {
		if v.view.Measure == cmd.measure {
			v.addSample(cmd.tag, cmd.value)
		}
	}
}

type flushReq struct {
	c chan bool
}

func (cmd *flushReq) handleCommand(w *worker) {
	w.reportUsage(time.Now())
	cmd.c <- true
}

type worker struct {
	views      map[string]*viewInternal
	startTimes map[*viewInternal]time.Time
	timer      *time.Ticker
	c          chan command
	quit, done chan bool
	mu         sync.RWMutex
	exporters  map[Exporter]struct{}
}

func newWorker(period time.Duration) *worker {
	w := &worker{
		views:      map[string]*viewInternal{},
		startTimes: map[*viewInternal]time.Time{},
		timer:      time.NewTicker(period),
		c:          make(chan command, 1024),
		quit:       make(chan bool),
		done:       make(chan bool),
		exporters:  map[Exporter]struct{}{},
	}
	go w.start()
	return w
}

func (w *worker) start() {
	for {
		select {
		case cmd := <-w.c:
			cmd.handleCommand(w)
		case <-w.timer.C:
			w.reportUsage(time.Now())
		case <-w.quit:
			w.timer.Stop()
			w.done <- true
			return
		}
	}
}

func (w *worker) reportView(v *viewInternal, now time.Time) {
	data := &Data{View: v.view, Start: w.startTimes[v], End: now, Rows: v.collectedRows()}
	w.mu.RLock()
	defer w.mu.RUnlock()
	for e := range w.exporters {
		e.ExportView(data)
	}
}

func (w *worker) reportUsage(now time.Time) {
	for _, v := range w.views {
		w.reportView(v, now)
	}
}

func (w *worker) Register(views ...*View) error {
	req := &registerViewReq{views: views, err: make(chan error)}
	w.c <- req
	return <-req.err
}

func (w *worker) Record(measure, tag string, value float64) {
	w.c <- &recordReq{measure: measure, tag: tag, value: value}
}

func (w *worker) RegisterExporter(e Exporter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.exporters[e] = struct{}{}
}

func (w *worker) UnregisterExporter(e Exporter) {
	w.Flush()
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.exporters, e)
}

func (w *worker) Flush() {
	req := &flushReq{c: make(chan bool)}
	w.c <- req
	<-req.c
}

func (w *worker) stop() {
	w.quit <- true
	<-w.done
}

type logExporter struct{ exported int }

func (e *logExporter) ExportView(vd *Data) {
	e.exported++
	for _, r := range vd.Rows {
		log.Printf("%v %v count=%d sum=%.1f", vd.View, r.Tags, r.Count, r.Sum)
	}
}

func main() {
	w := newWorker(10 * time.Second)
	latency := &View{Name: "grpc.io/client/roundtrip_latency", Description: "latency", Measure: "grpc.io/client/latency"}
	if err := w.Register(latency); err != nil {
		log.Fatal(err)
	}
	exp := &logExporter{}
	w.RegisterExporter(exp)
	w.Record("grpc.io/client/latency", "Echo", 12.5)
	w.Record("grpc.io/client/latency", "Echo", 7.5)
	w.UnregisterExporter(exp)
	w.stop()
	fmt.Println("exported batches:", exp.exported)
}
