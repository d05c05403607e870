// Pattern: influxdata/telegraf agent: an input plugin holds its own mutex for
// the whole Gather (so overlapping intervals never interleave) and emits
// metrics into the accumulator channel as it goes. The output loop batches
// and writes metrics without touching the plugin; only after the metric
// channel has been closed by the gather loop (all Gathers finished) does it
// lock the plugin to read its gather statistics for the final agent report.
package main

import (
	"fmt"
	"sync"
	"time"
)

const metricBufferLimit = 100

type Metric struct {
	Name   string
	Fields map[string]float64
	Time   time.Time
}

type CPUInput struct {
	mu       sync.Mutex
	gathers  int
	emitted  int
	lastTook time.Duration
}

func (c *CPUInput) Gather(acc chan<- Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	for core := 0; core < 16; core++ {
		acc <- Metric{
			Name:   "cpu",
			Fields: map[string]float64{"usage_user": float64(core) * 1.5, "usage_system": 0.7},
			Time:   start,
		}
		c.emitted++
	}
	c.gathers++
	c.lastTook = time.Since(start)
}

type outputLoop struct {
	written int
	batches int
}

func (o *outputLoop) run(acc <-chan Metric, input *CPUInput, done chan<- struct{}) {
	defer close(done)
	batch := make([]Metric, 0, 40)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		time.Sleep(200 * time.Microsecond) // write to the output
		o.written += len(batch)
		o.batches++
		batch = batch[:0]
	}
	for m := range acc {
		batch = append(batch, m)
		if len(batch) == cap(batch) {
			flush()
		}
	}
	flush()

	// acc is closed: the gather loop is finished and will not lock again.
	input.mu.Lock()
	gathers, emitted := input.gathers, input.emitted
	input.mu.Unlock()
	fmt.Printf("agent: gathers=%d emitted=%d written=%d batches=%d\n",
		gathers, emitted, o.written, o.batches)
}

func main() {
	input := &CPUInput{}
	acc := make(chan Metric, metricBufferLimit)
	done := make(chan struct{})
	out := &outputLoop{}
	go out.run(acc, input, done)

	var gatherers sync.WaitGroup
	ticker := time.NewTicker(500 * time.Microsecond)
	for i := 0; i < 50; i++ {
		<-ticker.C
		gatherers.Add(1)
		go func() { // a slow Gather may overlap the next interval
			defer gatherers.Done()
			input.Gather(acc)
		}()
	}
	ticker.Stop()
	gatherers.Wait()
	close(acc)
	<-done
}
