// Project: vitessio/vitess (go/vt/vttablet/tabletmanager/semisyncmonitor)
// Issue: #18275 "Deadlock in Semi-sync monitor", fixed by PR #18276.
//
// The semi-sync Monitor drives its housekeeping with vitess' go/timer.Timer:
// Open() calls m.ticks.Start(m.checkAndFixSemiSyncBlocked), and the timer's
// run goroutine invokes that keephouse callback on every tick. Timer.Stop()
// holds the timer mutex and does an unbuffered send `tm.msg <- timerStop`
// that the run goroutine only receives once the current keephouse call
// returns ("Stop is guaranteed to wait if KeepHouse is being executed").
// Monitor.Close() took m.mu and, while still holding it, called
// m.ticks.Stop(). If a tick is in flight, checkAndFixSemiSyncBlocked finishes
// its status query and calls m.setIsBlocked(), which needs m.mu -> the
// keephouse waits for m.mu held by Close, Close waits in the channel send for
// the keephouse to return.
//
// Deadlocking wait: Timer.Stop `tm.msg <- timerStop` (line 72) while Close
// holds m.mu (line 114); the keephouse blocks at setIsBlocked `m.mu.Lock()`
// (line 142).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type typeAction int

const timerStop typeAction = 0

type Timer struct {
	interval time.Duration
	mu       sync.Mutex
	running  bool
	msg      chan typeAction
}

func NewTimer(interval time.Duration) *Timer {
	return &Timer{interval: interval, msg: make(chan typeAction)}
}

func (tm *Timer) Start(keephouse func()) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.running {
		return
	}
	tm.running = true
	go tm.run(keephouse)
}

func (tm *Timer) run(keephouse func()) {
	for {
		t := time.NewTimer(tm.interval)
		select {
		case <-tm.msg: // timerStop
			t.Stop()
			return
		case <-t.C:
		}
		keephouse()
	}
}

// Stop guarantees that the timer will not execute any more calls to
// keephouse once it has returned.
func (tm *Timer) Stop() {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.running {
		tm.msg <- timerStop
		tm.running = false
	}
}

type ConnectionPool struct{ open bool }

func (p *ConnectionPool) Open()  { p.open = true }
func (p *ConnectionPool) Close() { p.open = false }

// ExecuteFetch of the semi-sync wait-sessions status query (a MySQL round trip).
func (p *ConnectionPool) ExecuteFetch(ctx context.Context, query string) (int64, error) {
	time.Sleep(60 * time.Millisecond)
	return 1, nil
}

type Monitor struct {
	ticks      *Timer
	clearTicks *Timer

	// mu protects the fields below.
	mu        sync.Mutex
	appPool   *ConnectionPool
	isOpen    bool
	isBlocked bool
}

// Open starts the monitor.
func (m *Monitor) Open() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.isOpen {
		return
	}
	m.isOpen = true
	m.appPool.Open()
	m.clearTicks.Start(m.clearAllData)
	m.ticks.Start(m.checkAndFixSemiSyncBlocked)
}

// Close stops the monitor.
func (m *Monitor) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.isOpen {
		return
	}
	m.isOpen = false
	m.clearTicks.Stop()
	m.ticks.Stop()
	m.appPool.Close()
}

// checkAndFixSemiSyncBlocked is the keephouse callback run by m.ticks.
func (m *Monitor) checkAndFixSemiSyncBlocked() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	isBlocked, err := m.isSemiSyncBlocked(ctx)
	if err != nil {
		return
	}
	m.setIsBlocked(isBlocked)
}

func (m *Monitor) isSemiSyncBlocked(ctx context.Context) (bool, error) {
	value, err := m.appPool.ExecuteFetch(ctx, "select variable_value from performance_schema.global_status ...")
	return value != 0, err
}

func (m *Monitor) setIsBlocked(val bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.isBlocked = val // (and wakes WaitUntilSemiSyncUnblocked waiters when false)
}

func (m *Monitor) clearAllData() {}

func main() {
	m := &Monitor{ticks: NewTimer(10 * time.Millisecond), clearTicks: NewTimer(24 * time.Hour), appPool: &ConnectionPool{}}
	m.Open()
	// The first tick fires at ~10ms and the status query runs until ~70ms;
	// the tablet changes type (e.g. DemotePrimary) and closes the monitor meanwhile.
	time.Sleep(30 * time.Millisecond)
	m.Close()
	fmt.Println("semi-sync monitor closed")
}
