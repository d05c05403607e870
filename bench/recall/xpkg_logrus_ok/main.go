// logrus_ok: modeled on sirupsen/logrus hooks (e.g. an error-counting hook).
// Logger.Log calls Hook.Fire while holding Logger.mu, and errCounter.SetQuiet
// holds errCounter.mu while calling Logger.SetLevel (errCounter.mu ->
// Logger.mu). Correct: errCounter.Fire touches only an atomic counter and
// never takes errCounter.mu, so there is no Logger.mu -> errCounter.mu edge.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"

	"example.com/recall/xpkg_logrus_ok/logx"
)

type errCounter struct {
	mu     sync.Mutex // guards quiet
	quiet  bool
	log    *logx.Logger
	errors atomic.Int64
}

// Fire implements logx.Hook using atomics only.
func (h *errCounter) Fire(level int, msg string) {
	if level >= 2 {
		h.errors.Add(1)
	}
}

func (h *errCounter) SetQuiet(q bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.quiet = q
	if q {
		h.log.SetLevel(2)
	} else {
		h.log.SetLevel(0)
	}
}

func main() {
	log := logx.New()
	h := &errCounter{log: log}
	log.AddHook(h)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			log.Log(i%3, fmt.Sprint("msg ", i))
		}
	}()
	go func() { defer wg.Done(); h.SetQuiet(true); h.SetQuiet(false) }()
	wg.Wait()
	fmt.Println("errors seen:", h.errors.Load())
}
