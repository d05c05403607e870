// Project: benthosdev/benthos (redpanda-data/connect)
// Bug: DynamicFanOut.SetOutput invoked the onAdd hook (installed with OptDynamicFanOutSetOnAdd by the dynamic output constructor) while still holding d.outputsMu; the hook refreshes the dynamic API's output gauge through fanOut.Labels(), which RLocks outputsMu, so adding an output via the HTTP API hangs.
// Fix: SetOutput mutates the output map under the lock and calls onAdd/onRemove only after unlocking.
package b25benthosdynamic_fixed

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

type Message struct{ parts [][]byte }

type Streamed interface {
	Consume(ctx context.Context, msg *Message) error
	Connected() bool
	Close(ctx context.Context) error
}

type stdoutWriter struct {
	mu    sync.Mutex
	lines []string
}

func (s *stdoutWriter) Consume(_ context.Context, msg *Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range msg.parts {
		s.lines = append(s.lines, string(p))
	}
	return nil
}
func (s *stdoutWriter) Connected() bool               { return true }
func (s *stdoutWriter) Close(_ context.Context) error { return nil }

type dropOutput struct{ dropped int }

func (d *dropOutput) Consume(_ context.Context, _ *Message) error { d.dropped++; return nil }
func (d *dropOutput) Connected() bool                             { return true }
func (d *dropOutput) Close(_ context.Context) error               { return nil }

type DynamicFanOut struct {
	outputsMu   sync.RWMutex
	outputs     map[string]Streamed
	onAdd       func(label string)
	onRemove    func(label string)
	maxInFlight int
}

func OptDynamicFanOutSetOnAdd(onAddFunc func(label string)) func(*DynamicFanOut) {
	return func(d *DynamicFanOut) { d.onAdd = onAddFunc }
}

func OptDynamicFanOutSetOnRemove(onRemoveFunc func(label string)) func(*DynamicFanOut) {
	return func(d *DynamicFanOut) { d.onRemove = onRemoveFunc }
}

func NewDynamicFanOut(outputs map[string]Streamed, options ...func(*DynamicFanOut)) *DynamicFanOut {
	d := &DynamicFanOut{
		outputs:     map[string]Streamed{},
		onAdd:       func(string) {},
		onRemove:    func(string) {},
		maxInFlight: 64,
	}
	for _, opt := range options {
		opt(d)
	}
	for k, v := range outputs {
		d.outputs[k] = v
	}
	return d
}

func (d *DynamicFanOut) SetOutput(ctx context.Context, label string, output Streamed) error {
	d.outputsMu.Lock()
	existing, removed := d.outputs[label]
	if removed {
		if err := existing.Close(ctx); err != nil {
			d.outputsMu.Unlock()
			return fmt.Errorf("failed to close output %q: %w", label, err)
		}
		delete(d.outputs, label)
	}
	if output != nil {
		d.outputs[label] = output
	}
	d.outputsMu.Unlock()
	if removed {
		d.onRemove(label)
	}
	if output != nil {
		d.onAdd(label)
	}
	return nil
}

func (d *DynamicFanOut) Labels() []string {
	d.outputsMu.RLock()
	defer d.outputsMu.RUnlock()
	labels := make([]string, 0, len(d.outputs))
	for k := range d.outputs {
		labels = append(labels, k)
	}
	sort.Strings(labels)
	return labels
}

func (d *DynamicFanOut) WriteTransaction(ctx context.Context, msg *Message) error {
	d.outputsMu.RLock()
	defer d.outputsMu.RUnlock()
	var errs []error
	for _, o := range d.outputs {
		if err := o.Consume(ctx, msg); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

type dynamicAPI struct {
	mu       sync.Mutex
	configs  map[string]string
	uptimes  map[string]int
	gauge    string
	onUpdate func(ctx context.Context, id, conf string) error
}

func (a *dynamicAPI) Started(id, conf string) {
	a.mu.Lock()
	a.configs[id] = conf
	a.uptimes[id]++
	a.mu.Unlock()
}

func (a *dynamicAPI) Stopped(id string) {
	a.mu.Lock()
	delete(a.configs, id)
	a.mu.Unlock()
}

func (a *dynamicAPI) HandleUpdate(ctx context.Context, id, conf string) error {
	return a.onUpdate(ctx, id, conf)
}

func NewDynamic(initial map[string]Streamed) (*DynamicFanOut, *dynamicAPI) {
	api := &dynamicAPI{configs: map[string]string{}, uptimes: map[string]int{}}
	var fanOut *DynamicFanOut
	refreshGauge := func() { api.gauge = strings.Join(fanOut.Labels(), ",") }
	fanOut = NewDynamicFanOut(initial,
		OptDynamicFanOutSetOnAdd(func(l string) {
			api.Started(l, "")
			refreshGauge()
		}),
		OptDynamicFanOutSetOnRemove(func(l string) {
			api.Stopped(l)
			refreshGauge()
		}),
	)
	api.onUpdate = func(ctx context.Context, id, conf string) error {
		var out Streamed = &stdoutWriter{}
		if conf == "drop" {
			out = &dropOutput{}
		}
		return fanOut.SetOutput(ctx, id, out)
	}
	return fanOut, api
}

func TestProbe(t *testing.T) {
	fanOut, api := NewDynamic(map[string]Streamed{"audit": &dropOutput{}})
	ctx := context.Background()
	if err := api.HandleUpdate(ctx, "stdout", "stdout: {}"); err != nil {
		t.Fatal(err)
	}
	if err := fanOut.WriteTransaction(ctx, &Message{parts: [][]byte{[]byte("hello")}}); err != nil {
		t.Fatal(err)
	}
	if api.gauge != "audit,stdout" {
		t.Fatalf("gauge = %q", api.gauge)
	}
}
