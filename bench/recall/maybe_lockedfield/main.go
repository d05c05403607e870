// Pattern: a `headLocked` field on a helper object decides whether the
// helper takes the owner's lock. Modelled on Prometheus tsdb, where the head
// hands out appenders; an appender created while the head lock is already held
// (during compaction bookkeeping) is marked so that Commit does not re-lock.
package main

import (
	"fmt"
	"sync"
)

type sample struct {
	series string
	t      int64
	v      float64
}

type Head struct {
	mu          sync.Mutex
	series      map[string][]sample
	minT, maxT  int64
	compactions int
}

func NewHead() *Head { return &Head{series: make(map[string][]sample), minT: -1} }

type appender struct {
	head       *Head
	headLocked bool // true iff the creator holds head.mu for the appender's whole life
	pending    []sample
}

// Appender is for callers that do not hold h.mu.
func (h *Head) Appender() *appender { return h.newAppender(false) }

func (h *Head) newAppender(locked bool) *appender {
	return &appender{head: h, headLocked: locked}
}

func (a *appender) Append(series string, t int64, v float64) {
	a.pending = append(a.pending, sample{series, t, v})
}

func (a *appender) Commit() int {
	h := a.head
	if !a.headLocked {
		h.mu.Lock()
		defer h.mu.Unlock()
	}
	for _, s := range a.pending {
		h.series[s.series] = append(h.series[s.series], s)
		if h.minT < 0 || s.t < h.minT {
			h.minT = s.t
		}
		if s.t > h.maxT {
			h.maxT = s.t
		}
	}
	n := len(a.pending)
	a.pending = nil
	return n
}

// Truncate drops samples older than mint and records a bookkeeping sample
// through an appender that knows the head lock is held.
func (h *Head) Truncate(mint int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	dropped := 0
	for name, ss := range h.series {
		kept := ss[:0]
		for _, s := range ss {
			if s.t >= mint {
				kept = append(kept, s)
			} else {
				dropped++
			}
		}
		h.series[name] = kept
	}
	h.minT = mint
	h.compactions++
	holding := true
	app := h.newAppender(holding)
	app.Append("tsdb_head_truncated_samples", mint, float64(dropped))
	app.Commit()
}

func (h *Head) NumSamples() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ss := range h.series {
		n += len(ss)
	}
	return n
}

func main() {
	h := NewHead()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for t := int64(0); t < 300; t++ {
				app := h.Appender()
				app.Append(fmt.Sprintf("cpu{core=%d}", w), t, float64(t))
				app.Commit()
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := int64(0); m < 300; m += 30 {
			h.Truncate(m)
		}
	}()
	wg.Wait()
	fmt.Println("samples:", h.NumSamples())
}
