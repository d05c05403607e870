// FIXED TWIN. Project: influxdb (tsdb/engine/tsm1 Engine compactions).
// Bug (approximate, from memory): Engine.SetCompactionsEnabled(false) ->
// disableLevelCompactions() held e.mu while it closed the compaction "done"
// channel and then wg.Wait()ed for the background compaction goroutines to
// exit. A compaction goroutine that was in the middle of a level compaction
// needs e.mu (via the compactionFinished/stats helper) before it can loop
// around, see done closed and call wg.Done(), so the shard close / backup /
// restore path hung. Exact issue/PR not remembered (approximate). Fix:
// capture the WaitGroup under e.mu, unlock, then wait.
package influxdb_compact_fixed

import (
	"sync"
	"testing"
	"time"
)

type CompactionGroup []string

// CompactionPlanner determines what TSM files should be compacted.
type CompactionPlanner interface {
	PlanLevel(level int) []CompactionGroup
}

type fakePlanner struct{}

func (fakePlanner) PlanLevel(level int) []CompactionGroup {
	return []CompactionGroup{{"000000001-000000001.tsm", "000000002-000000001.tsm"}}
}

type EngineStatistics struct {
	TSMCompactions        [3]int64
	TSMCompactionsActive  [3]int64
	TSMCompactionDuration [3]time.Duration
}

type Engine struct {
	mu sync.RWMutex

	done         chan struct{}
	wg           *sync.WaitGroup
	levelWorkers int

	planner CompactionPlanner
	stats   *EngineStatistics
}

func NewEngine() *Engine {
	return &Engine{planner: fakePlanner{}, stats: &EngineStatistics{}}
}

// SetCompactionsEnabled enables compactions on the engine. When disabled
// all running compactions are aborted and new compactions stop running.
func (e *Engine) SetCompactionsEnabled(enabled bool) {
	if enabled {
		e.enableLevelCompactions(false)
	} else {
		e.disableLevelCompactions(false)
	}
}

func (e *Engine) enableLevelCompactions(wait bool) {
	if !wait {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.levelWorkers > 0 {
			e.levelWorkers--
		}
	}
	if e.done != nil || e.levelWorkers != 0 {
		return
	}

	quit := make(chan struct{})
	e.done = quit
	wg := new(sync.WaitGroup)
	e.wg = wg
	wg.Add(1)
	go func() { defer wg.Done(); e.compact(quit) }()
}

// disableLevelCompactions will stop level compactions before returning.
func (e *Engine) disableLevelCompactions(wait bool) {
	e.mu.Lock()
	old := e.levelWorkers
	if !wait {
		e.levelWorkers++
	}

	if old == 0 && e.done != nil {
		close(e.done)
		e.done = nil
	}
	wg := e.wg
	e.mu.Unlock() // FIX: release e.mu before waiting for the compaction goroutines
	wg.Wait()
}

func (e *Engine) compact(quit <-chan struct{}) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			for level := 1; level <= 3; level++ {
				groups := e.planner.PlanLevel(level)
				for _, g := range groups {
					e.compactGroup(level, g)
				}
			}
		}
	}
}

func (e *Engine) compactGroup(level int, group CompactionGroup) {
	start := time.Now()
	e.stats.TSMCompactionsActive[level-1]++
	time.Sleep(30 * time.Millisecond) // writing the new TSM file
	e.compactionFinished(level, time.Since(start))
}

func (e *Engine) compactionFinished(level int, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stats.TSMCompactionsActive[level-1]--
	e.stats.TSMCompactions[level-1]++
	e.stats.TSMCompactionDuration[level-1] += d
}

func TestEngine_DisableCompactionsWhileCompacting(t *testing.T) {
	e := NewEngine()
	e.SetCompactionsEnabled(true)

	time.Sleep(15 * time.Millisecond) // a level compaction is in flight

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // Shard.Close / backup path
		defer wg.Done()
		e.SetCompactionsEnabled(false)
	}()
	wg.Wait()
}
