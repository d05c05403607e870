package main

import (
	"context"
	"errors"
	"sync"
)

// A meter provider flushes its one reader under its lock, through an
// interface. The reader's guard tests its own buffer; its test of the
// error the export returned (the export was given the caller's context)
// comes after the export, which calls back into the provider: no branch
// on what the reader was passed decides that call.

type meterProvider struct {
	mu     sync.Mutex
	meters map[string]int
	reader metricReader
}

type metricReader interface {
	ForceFlush(ctx context.Context) error
}

func (p *meterProvider) Meter(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.meters[name]++
	return p.meters[name]
}

func (p *meterProvider) ForceFlush(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reader.ForceFlush(ctx) // want `meterProvider.mu locked again by periodicReader.ForceFlush -> runMeters.func1 -> meterProvider.Meter \(at exporterr.go:\d+\), the same lock: the program makes one meterProvider`
}

type periodicReader struct {
	pending []int
	export  func(ctx context.Context, batch []int) error
}

var errExport = errors.New("export failed")

func (r *periodicReader) ForceFlush(ctx context.Context) error {
	if len(r.pending) == 0 {
		return nil
	}
	if err := r.export(ctx, r.pending); err != nil {
		return errExport
	}
	r.pending = nil
	return nil
}

// Correct: the reader exports only for a context that asks for a pull,
// and no caller of the provider passes one: a branch before the export
// on what the reader was passed, which the analysis does not follow.
type gaugeProvider struct {
	mu     sync.Mutex
	gauges map[string]int
	reader gaugeReader
}

type gaugeReader interface {
	Collect(ctx context.Context) error
}

func (p *gaugeProvider) Gauge(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gauges[name]++
	return p.gauges[name]
}

func (p *gaugeProvider) Collect(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reader.Collect(ctx)
}

type pullKey struct{}

type pullReader struct {
	export func(ctx context.Context) error
}

func (r *pullReader) Collect(ctx context.Context) error {
	if ctx.Value(pullKey{}) == nil {
		return nil
	}
	return r.export(ctx)
}

func runMeters() {
	p := &meterProvider{meters: map[string]int{}}
	p.reader = &periodicReader{pending: []int{1}, export: func(ctx context.Context, batch []int) error {
		p.Meter("exporter")
		return nil
	}}
	_ = p.ForceFlush(context.Background())

	g := &gaugeProvider{gauges: map[string]int{}}
	g.reader = &pullReader{export: func(ctx context.Context) error {
		g.Gauge("exporter")
		return nil
	}}
	_ = g.Collect(context.Background())
}
