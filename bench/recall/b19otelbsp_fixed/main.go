// Project: open-telemetry/opentelemetry-go (sdk/trace/batch_span_processor.go)
// Bug: BatchSpanProcessor.Shutdown took bsp.batchMutex (to stop the export
// timer and guard the batch) and then waited on bsp.stopWait.Wait() for the
// processQueue goroutine. On stop that goroutine drains the queue and calls
// exportSpans, which needs bsp.batchMutex: WaitGroup.Wait under a lock that
// the goroutine being waited for must acquire to finish.
// Fix: Shutdown no longer holds batchMutex while waiting; the worker owns the
// timer and the final export.

package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type ReadOnlySpan interface {
	Name() string
	EndTime() time.Time
}

type span struct {
	name string
	end  time.Time
}

func (s *span) Name() string       { return s.name }
func (s *span) EndTime() time.Time { return s.end }

type SpanExporter interface {
	ExportSpans(ctx context.Context, spans []ReadOnlySpan) error
	Shutdown(ctx context.Context) error
}

type stdoutExporter struct{ exported int }

func (e *stdoutExporter) ExportSpans(ctx context.Context, spans []ReadOnlySpan) error {
	for _, s := range spans {
		fmt.Println("export:", s.Name())
	}
	e.exported += len(spans)
	return nil
}
func (e *stdoutExporter) Shutdown(ctx context.Context) error { return nil }

type BatchSpanProcessorOptions struct {
	MaxQueueSize       int
	BatchTimeout       time.Duration
	MaxExportBatchSize int
}

type batchSpanProcessor struct {
	e SpanExporter
	o BatchSpanProcessorOptions

	queue   chan ReadOnlySpan
	dropped uint32

	batch      []ReadOnlySpan
	batchMutex sync.Mutex
	timer      *time.Timer
	stopWait   sync.WaitGroup
	stopOnce   sync.Once
	stopCh     chan struct{}
}

func NewBatchSpanProcessor(exporter SpanExporter, o BatchSpanProcessorOptions) *batchSpanProcessor {
	bsp := &batchSpanProcessor{e: exporter, o: o,
		batch:  make([]ReadOnlySpan, 0, o.MaxExportBatchSize),
		timer:  time.NewTimer(o.BatchTimeout),
		queue:  make(chan ReadOnlySpan, o.MaxQueueSize),
		stopCh: make(chan struct{})}
	bsp.stopWait.Add(1)
	go func() {
		defer bsp.stopWait.Done()
		bsp.processQueue()
		bsp.drainQueue()
	}()
	return bsp
}

func (bsp *batchSpanProcessor) OnEnd(s ReadOnlySpan) {
	select {
	case bsp.queue <- s:
	default:
		bsp.dropped++
	}
}

func (bsp *batchSpanProcessor) exportSpans(ctx context.Context) error {
	bsp.batchMutex.Lock()
	defer bsp.batchMutex.Unlock()
	bsp.timer.Reset(bsp.o.BatchTimeout)
	if len(bsp.batch) > 0 {
		err := bsp.e.ExportSpans(ctx, bsp.batch)
		bsp.batch = bsp.batch[:0]
		return err
	}
	return nil
}

func (bsp *batchSpanProcessor) processQueue() {
	defer bsp.timer.Stop()
	ctx := context.Background()
	for {
		select {
		case <-bsp.stopCh:
			return
		case <-bsp.timer.C:
			_ = bsp.exportSpans(ctx)
		case sd := <-bsp.queue:
			bsp.batchMutex.Lock()
			bsp.batch = append(bsp.batch, sd)
			full := len(bsp.batch) >= bsp.o.MaxExportBatchSize
			bsp.batchMutex.Unlock()
			if full {
				_ = bsp.exportSpans(ctx)
			}
		}
	}
}

func (bsp *batchSpanProcessor) drainQueue() {
	ctx := context.Background()
	for {
		select {
		case sd := <-bsp.queue:
			bsp.batchMutex.Lock()
			bsp.batch = append(bsp.batch, sd)
			bsp.batchMutex.Unlock()
		default:
			_ = bsp.exportSpans(ctx)
			return
		}
	}
}

func (bsp *batchSpanProcessor) Shutdown(ctx context.Context) error {
	var err error
	bsp.stopOnce.Do(func() {
		close(bsp.stopCh)
		bsp.stopWait.Wait()
		err = bsp.e.Shutdown(ctx)
	})
	return err
}

func main() {
	exp := &stdoutExporter{}
	bsp := NewBatchSpanProcessor(exp, BatchSpanProcessorOptions{
		MaxQueueSize: 2048, BatchTimeout: 5 * time.Second, MaxExportBatchSize: 512})
	for _, n := range []string{"GET /api/users", "SELECT users", "redis GET session"} {
		bsp.OnEnd(&span{name: n, end: time.Now()})
	}
	time.Sleep(20 * time.Millisecond)
	if err := bsp.Shutdown(context.Background()); err != nil {
		fmt.Println("shutdown:", err)
	}
	fmt.Println("exported", exp.exported, "dropped", bsp.dropped)
}
