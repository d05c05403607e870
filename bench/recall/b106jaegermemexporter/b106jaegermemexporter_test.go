// Project: jaegertracing/jaeger (cmd/opentelemetry/app/exporter/memoryexporter/factory.go and badgerexporter/factory.go, the OpenTelemetry based collector), v1.19, September 2020 (PR #2442 "Fix mutex unlock in storage exporters"; the exact leaking path is approximate).
// Bug: the in-memory and Badger exporter factories keep one storage factory singleton, shared between the collector pipeline and the query service, and guard its creation with the exporter factory's mutex. createStorageFactory locked f.mutex and, once the singleton existed, returned it without unlocking, so the second exporter built from the factory leaked the mutex and the third one (here the first exporter rebuilt by a service reload, with two jaeger_memory exporters configured) blocks forever on it. The fix defers the unlock.
package b106jaegermemexporter

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// ---- plugin/storage/memory and storage ----

type Span struct{ TraceID, OperationName string }

type SpanWriter interface {
	WriteSpan(ctx context.Context, span *Span) error
}

type StorageFactory interface {
	Initialize(metricsFactory string, logger string) error
	CreateSpanWriter() (SpanWriter, error)
}

type memoryOptions struct{ MaxTraces int }

type memoryStore struct {
	mu     sync.RWMutex
	traces map[string][]*Span
}

func (m *memoryStore) WriteSpan(_ context.Context, span *Span) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.traces[span.TraceID] = append(m.traces[span.TraceID], span)
	return nil
}

type memoryFactory struct {
	options memoryOptions
	store   *memoryStore
}

func newMemoryFactory() *memoryFactory { return &memoryFactory{} }

func (f *memoryFactory) InitFromOptions(opts memoryOptions) { f.options = opts }

func (f *memoryFactory) Initialize(_ string, _ string) error {
	f.store = &memoryStore{traces: map[string][]*Span{}}
	return nil
}

func (f *memoryFactory) CreateSpanWriter() (SpanWriter, error) { return f.store, nil }

// ---- collector component model ----

type ExporterSettings struct{ TypeVal, NameVal string }

type Config struct {
	ExporterSettings
	Options memoryOptions
}

type ExporterCreateParams struct{ Logger string }

type TraceExporter interface {
	ConsumeTraces(ctx context.Context, spans []*Span) error
}

type spanWriterExporter struct {
	name   string
	writer SpanWriter
}

func (e *spanWriterExporter) ConsumeTraces(ctx context.Context, spans []*Span) error {
	for _, s := range spans {
		if err := e.writer.WriteSpan(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// NewSpanWriterExporter mirrors exporter.NewSpanWriterExporter.
func NewSpanWriterExporter(cfg *Config, factory StorageFactory) (TraceExporter, error) {
	w, err := factory.CreateSpanWriter()
	if err != nil {
		return nil, err
	}
	return &spanWriterExporter{name: cfg.NameVal, writer: w}, nil
}

// ---- cmd/opentelemetry/app/exporter/memoryexporter/factory.go ----

const TypeStr = "jaeger_memory"

// Factory is the factory for Jaeger in-memory exporter.
type Factory struct {
	mutex *sync.Mutex
}

func NewFactory() *Factory { return &Factory{mutex: &sync.Mutex{}} }

// singleton instance of the factory, shared between the OTEL collector and the query service
var instance StorageFactory

// GetFactory returns singleton instance of the storage factory.
func GetFactory() StorageFactory { return instance }

func (f Factory) Type() string { return TypeStr }

// CreateTraceExporter implements the OTEL component.ExporterFactory interface.
func (f Factory) CreateTraceExporter(_ context.Context, params ExporterCreateParams, cfg *Config) (TraceExporter, error) {
	factory, err := f.createStorageFactory(params, cfg)
	if err != nil {
		return nil, err
	}
	return NewSpanWriterExporter(cfg, factory)
}

func (f Factory) createStorageFactory(params ExporterCreateParams, cfg *Config) (StorageFactory, error) {
	f.mutex.Lock()
	if instance != nil {
		return instance, nil // BUG: f.mutex stays locked
	}
	factory := newMemoryFactory()
	factory.InitFromOptions(cfg.Options)
	if err := factory.Initialize("null", params.Logger); err != nil {
		f.mutex.Unlock()
		return nil, err
	}
	instance = factory
	f.mutex.Unlock()
	return factory, nil
}

// ---- collector service: build one exporter per configured exporter, rebuild on reload ----

type service struct {
	factories map[string]*Factory
	configs   []*Config
	exporters map[string]TraceExporter
}

func (s *service) buildExporters(ctx context.Context) error {
	built := map[string]TraceExporter{}
	for _, cfg := range s.configs {
		factory, ok := s.factories[cfg.TypeVal]
		if !ok {
			return fmt.Errorf("unknown exporter type %q", cfg.TypeVal)
		}
		exp, err := factory.CreateTraceExporter(ctx, ExporterCreateParams{Logger: cfg.NameVal}, cfg)
		if err != nil {
			return err
		}
		built[cfg.NameVal] = exp
	}
	s.exporters = built
	return nil
}

// Start builds the pipelines; ReloadService rebuilds them after a config change.
func (s *service) Start(ctx context.Context) error         { return s.buildExporters(ctx) }
func (s *service) ReloadService(ctx context.Context) error { return s.buildExporters(ctx) }

func TestB106jaegermemexporter(t *testing.T) {
	instance = nil
	svc := &service{
		factories: map[string]*Factory{TypeStr: NewFactory()},
		configs: []*Config{
			{ExporterSettings: ExporterSettings{TypeVal: TypeStr, NameVal: "jaeger_memory"}, Options: memoryOptions{MaxTraces: 1000}},
			{ExporterSettings: ExporterSettings{TypeVal: TypeStr, NameVal: "jaeger_memory/archive"}, Options: memoryOptions{MaxTraces: 1000}},
		},
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := svc.ReloadService(ctx); err != nil {
		t.Fatal(err)
	}
	for name, exp := range svc.exporters {
		if err := exp.ConsumeTraces(ctx, []*Span{{TraceID: "t1", OperationName: name}}); err != nil {
			t.Fatal(err)
		}
	}
	if GetFactory() == nil {
		t.Fatal("query service sees no storage factory")
	}
}
