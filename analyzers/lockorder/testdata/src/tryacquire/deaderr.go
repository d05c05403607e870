package tryacquire

import "sync"

// A test of an error no callee ever makes (`if err := w.closeSegment();
// err != nil`, closeSegment returning nil on every path) guards a return
// that cannot run: the function that goes on to take the snapshot's
// commit lock takes it on every path that returns, and its caller holds
// it into a read lock of the engine, which a second snapshot holds while
// it takes the commit lock (influxdb's backup against a cache snapshot).

type snapCache struct {
	commit sync.Mutex
	mu     sync.Mutex
	size   int
}

func (c *snapCache) snapshot() int {
	c.commit.Lock() // released by clearSnapshot
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

func (c *snapCache) clearSnapshot() { c.commit.Unlock() }

type segmentLog struct {
	mu     sync.Mutex
	closed int
}

func (l *segmentLog) closeSegment() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed++
	return nil
}

type snapEngine struct {
	mu    sync.RWMutex
	wal   *segmentLog
	cache *snapCache
}

func (e *snapEngine) prepare() (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.wal.closeSegment(); err != nil {
		return 0, err
	}
	return e.cache.snapshot(), nil
}

func (e *snapEngine) writeSnapshot() error {
	n, err := e.prepare()
	if err != nil {
		return err
	}
	e.mu.RLock() // want `lock order inversion: snapEngine.mu then snapCache.commit in snapEngine.prepare \(deaderr.go:\d+ -> deaderr.go:\d+ via snapCache.snapshot\) but snapCache.commit then snapEngine.mu in snapEngine.writeSnapshot \(deaderr.go:\d+ -> deaderr.go:\d+\) \[lock-order\]`
	defer e.mu.RUnlock()
	_ = n
	e.cache.clearSnapshot()
	return nil
}

// The fix: the commit lock let go before the engine's. Silent.
func (e *snapEngine) writeSnapshotFixed() error {
	n, err := e.prepare()
	if err != nil {
		return err
	}
	e.cache.clearSnapshot()
	e.mu.RLock()
	defer e.mu.RUnlock()
	_ = n
	return nil
}
