// Project: open-telemetry/opentelemetry-go (sdk/trace/provider.go TracerProvider.Tracer, internal/global/internal_logging.go Info and SetLogger), v1.x up to v1.13, fixed in 2023 together with the Shutdown deadlock of issue #3890 (PR #3845 as I remember it; approximate).
// Bug: TracerProvider.Tracer holds p.mu (deferred unlock) while it creates a tracer for a new instrumentation scope and logs "Tracer created" through the global internal logger. When the logr sink installed with otel.SetLogger is itself instrumented with tracing (a log bridge that records each log line as a span), the log call asks the same TracerProvider for a tracer and blocks on p.mu, which the goroutine already holds. The fix moves the global.Info call after the mutex is released, with a comment that logging code may be instrumented with tracing.
package b106oteltracerlogfixed

import (
	"context"
	"sync"
	"testing"
)

// ---- github.com/go-logr/logr (the parts otel uses) ----

type LogSink interface {
	Enabled(level int) bool
	Info(level int, msg string, keysAndValues ...interface{})
}

type Logger struct {
	sink  LogSink
	level int
}

func (l Logger) V(level int) Logger { return Logger{sink: l.sink, level: l.level + level} }

func (l Logger) Info(msg string, keysAndValues ...interface{}) {
	if l.sink != nil && l.sink.Enabled(l.level) {
		l.sink.Info(l.level, msg, keysAndValues...)
	}
}

// ---- internal/global/internal_logging.go ----

var (
	globalLoggerLock = &sync.RWMutex{}
	globalLogger     Logger
)

// SetLogger overrides the globalLogger with l.
func SetLogger(l Logger) {
	globalLoggerLock.Lock()
	defer globalLoggerLock.Unlock()
	globalLogger = l
}

func getLogger() Logger {
	globalLoggerLock.RLock()
	defer globalLoggerLock.RUnlock()
	return globalLogger
}

// Info prints messages about the general state of the API or SDK.
func Info(msg string, keysAndValues ...interface{}) {
	getLogger().V(4).Info(msg, keysAndValues...)
}

// ---- trace API and sdk/trace ----

type Scope struct{ Name, Version, SchemaURL string }

type Span interface{ End() }

type Tracer interface {
	Start(ctx context.Context, name string) (context.Context, Span)
}

type recordingSpan struct {
	name   string
	tracer *tracer
}

func (s *recordingSpan) End() {}

type tracer struct {
	provider             *TracerProvider
	instrumentationScope Scope
}

func (tr *tracer) Start(ctx context.Context, name string) (context.Context, Span) {
	return ctx, &recordingSpan{name: name, tracer: tr}
}

type TracerProvider struct {
	mu          sync.Mutex
	namedTracer map[Scope]*tracer
}

func NewTracerProvider() *TracerProvider {
	return &TracerProvider{namedTracer: map[Scope]*tracer{}}
}

func (p *TracerProvider) Tracer(name string) Tracer {
	if name == "" {
		name = "go.opentelemetry.io/otel/sdk/tracer"
	}
	is := Scope{Name: name}
	t, ok := func() (*tracer, bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		t, ok := p.namedTracer[is]
		if !ok {
			t = &tracer{provider: p, instrumentationScope: is}
			p.namedTracer[is] = t
		}
		return t, ok
	}()
	if !ok {
		// This code is outside the mutex to not hold the lock while calling third party logging code:
		// logging code may be instrumented with tracing and deadlock because it could try
		// acquiring the same non-reentrant mutex.
		Info("Tracer created", "name", name, "version", is.Version, "schemaURL", is.SchemaURL)
	}
	return t
}

// ---- application: a log bridge that turns SDK log lines into spans ----

type tracingSink struct {
	verbosity int
	provider  func() *TracerProvider
	lines     []string
}

func (s *tracingSink) Enabled(level int) bool { return level <= s.verbosity }

func (s *tracingSink) Info(_ int, msg string, _ ...interface{}) {
	_, span := s.provider().Tracer("example.com/logbridge").Start(context.Background(), "log: "+msg)
	s.lines = append(s.lines, msg)
	span.End()
}

func TestB106oteltracerlogFixed(t *testing.T) {
	tp := NewTracerProvider()
	sink := &tracingSink{verbosity: 8, provider: func() *TracerProvider { return tp }}
	SetLogger(Logger{sink: sink})
	defer SetLogger(Logger{})

	_, span := tp.Tracer("example.com/app").Start(context.Background(), "handle-request")
	span.End()
	if len(sink.lines) == 0 {
		t.Fatal("expected the SDK to log the tracer creation")
	}
}
