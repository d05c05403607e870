// Project: open-telemetry/opentelemetry-go (sdk/trace/provider.go: TracerProvider.Shutdown and TracerProvider.Tracer), v1.13.0, March 2023 (issue #3890 "Deadlock in trace SDK shutdown", regression from PR #3551, fixed in v1.14.0 by PR #3845).
// Bug: since v1.13.0 TracerProvider.Shutdown holds p.mu (deferred unlock) while it shuts down every registered span processor, and the final export of a span processor goes through the exporter's gRPC client, whose application interceptor calls TracerProvider.Tracer() to trace the RPC. Tracer() locks p.mu unconditionally, so Shutdown blocks forever on the mutex it holds itself. In the report the final export ran on the batch processor's goroutine; here the processor flushes on the caller's goroutine, which makes the cycle a pure double lock of p.mu. The fix makes isShutdown atomic and has Tracer() return a no-op tracer, without taking p.mu, once shutdown has started.
package b106oteltpshutdown

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// ---- go.opentelemetry.io/otel/trace and sdk/instrumentation ----

type Scope struct{ Name, Version, SchemaURL string }

type TracerOption func(*Scope)

func WithInstrumentationVersion(v string) TracerOption { return func(s *Scope) { s.Version = v } }

type Span interface{ End() }

type Tracer interface {
	Start(ctx context.Context, name string) (context.Context, Span)
}

// ---- sdk/trace: spans and processors ----

type ReadOnlySpan interface{ Name() string }

type snapshot struct{ name string }

func (s snapshot) Name() string { return s.name }

type SpanProcessor interface {
	OnEnd(s ReadOnlySpan)
	Shutdown(ctx context.Context) error
}

type spanProcessorState struct {
	sp    SpanProcessor
	state *sync.Once
}

type spanProcessorStates []*spanProcessorState

type recordingSpan struct {
	name   string
	tracer *tracer
}

func (s *recordingSpan) End() {
	for _, sps := range s.tracer.provider.getSpanProcessors() {
		sps.sp.OnEnd(snapshot{name: s.name})
	}
}

type tracer struct {
	provider             *TracerProvider
	instrumentationScope Scope
}

func (tr *tracer) Start(ctx context.Context, name string) (context.Context, Span) {
	return ctx, &recordingSpan{name: name, tracer: tr}
}

// ---- sdk/trace/provider.go (v1.13.0) ----

type TracerProvider struct {
	mu             sync.Mutex
	namedTracer    map[Scope]*tracer
	spanProcessors atomic.Value
	isShutdown     bool
}

func NewTracerProvider(processors ...SpanProcessor) *TracerProvider {
	tp := &TracerProvider{namedTracer: map[Scope]*tracer{}}
	sps := spanProcessorStates{}
	for _, sp := range processors {
		sps = append(sps, &spanProcessorState{sp: sp, state: &sync.Once{}})
	}
	tp.spanProcessors.Store(sps)
	return tp
}

func (p *TracerProvider) getSpanProcessors() spanProcessorStates {
	return p.spanProcessors.Load().(spanProcessorStates)
}

func (p *TracerProvider) Tracer(name string, opts ...TracerOption) Tracer {
	is := Scope{Name: name}
	for _, o := range opts {
		o(&is)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.namedTracer[is]
	if !ok {
		t = &tracer{provider: p, instrumentationScope: is}
		p.namedTracer[is] = t
	}
	return t
}

func (p *TracerProvider) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isShutdown {
		return nil
	}
	p.isShutdown = true

	var retErr error
	for _, sps := range p.getSpanProcessors() {
		var err error
		sps.state.Do(func() {
			err = sps.sp.Shutdown(ctx)
		})
		if err != nil && retErr == nil {
			retErr = err
		}
	}
	p.spanProcessors.Store(spanProcessorStates{})
	return retErr
}

// ---- exporter: otlptrace exporter over a gRPC connection with interceptors ----

type UnaryClientInterceptor func(ctx context.Context, method string, invoker func(ctx context.Context) error) error

type ClientConn struct{ unaryInt UnaryClientInterceptor }

func (cc *ClientConn) Invoke(ctx context.Context, method string, send func(ctx context.Context) error) error {
	if cc.unaryInt != nil {
		return cc.unaryInt(ctx, method, send)
	}
	return send(ctx)
}

type grpcClient struct {
	conn     *ClientConn
	uploaded int
}

func (c *grpcClient) UploadTraces(ctx context.Context, spans []ReadOnlySpan) error {
	return c.conn.Invoke(ctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", func(context.Context) error {
		c.uploaded += len(spans)
		return nil
	})
}

type Exporter struct{ client *grpcClient }

func (e *Exporter) ExportSpans(ctx context.Context, spans []ReadOnlySpan) error {
	return e.client.UploadTraces(ctx, spans)
}

// flushingProcessor buffers ended spans and exports what is left when it is shut down.
type flushingProcessor struct {
	mu    sync.Mutex
	queue []ReadOnlySpan
	e     *Exporter
}

func (b *flushingProcessor) OnEnd(s ReadOnlySpan) {
	b.mu.Lock()
	b.queue = append(b.queue, s)
	b.mu.Unlock()
}

func (b *flushingProcessor) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	batch := b.queue
	b.queue = nil
	b.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := b.e.ExportSpans(ctx, batch); err != nil {
		return fmt.Errorf("final export: %w", err)
	}
	return nil
}

// tracingInterceptor is the application's gRPC interceptor, applied to every client connection.
func tracingInterceptor(tp *TracerProvider) UnaryClientInterceptor {
	return func(ctx context.Context, method string, invoker func(ctx context.Context) error) error {
		ctx, span := tp.Tracer("example.com/rpc", WithInstrumentationVersion("1.0")).Start(ctx, method)
		defer span.End()
		return invoker(ctx)
	}
}

func TestB106oteltpshutdown(t *testing.T) {
	client := &grpcClient{conn: &ClientConn{}}
	bsp := &flushingProcessor{e: &Exporter{client: client}}
	tp := NewTracerProvider(bsp)
	client.conn.unaryInt = tracingInterceptor(tp)

	_, span := tp.Tracer("example.com/app").Start(context.Background(), "handle-request")
	span.End()

	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if client.uploaded != 1 {
		t.Fatalf("uploaded %d spans, want 1", client.uploaded)
	}
}
