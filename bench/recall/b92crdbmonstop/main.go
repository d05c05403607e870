// Project: cockroachdb/cockroach (pkg/util/mon/bytes_usage.go), v23.1/v23.2 development, June 2023.
// Bug: BytesMonitor.doStop locks mm.mu for the whole shutdown and, when Stop finds leftover allocated bytes, reports them and then calls mm.releaseBytes, which locks mm.mu again, so stopping a monitor whose accounts leaked memory self-deadlocks in release builds (PR #105392 "mon: fix deadlock in BytesMonitor.doStop", fixed by calling a variant that expects mm.mu to be held; code approximate).
package main

import (
	"context"
	"fmt"
	"sync"
)

// BoundAccount tracks the bytes reserved from a monitor by one consumer.
type BoundAccount struct {
	used     int64
	reserved int64
	mon      *BytesMonitor
}

func (b *BoundAccount) Grow(ctx context.Context, x int64) error {
	if b.reserved < x {
		minExtra := b.mon.roundSize(x)
		if err := b.mon.reserveBytes(ctx, minExtra); err != nil {
			return err
		}
		b.reserved += minExtra
	}
	b.reserved -= x
	b.used += x
	return nil
}

// Clear releases all the reserved and used bytes back to the monitor.
func (b *BoundAccount) Clear(ctx context.Context) {
	if b.mon == nil {
		return
	}
	b.mon.releaseBytes(ctx, b.used+b.reserved)
	b.used, b.reserved = 0, 0
}

// BytesMonitor defines an object that can track and limit memory usage by
// other components; monitors form a tree via their pool (parent).
type BytesMonitor struct {
	mu struct {
		sync.Mutex
		curAllocated int64
		maxAllocated int64
		curBudget    BoundAccount
		stopped      bool
	}
	name               string
	limit              int64
	poolAllocationSize int64
	pool               *BytesMonitor
}

func NewMonitor(name string, pool *BytesMonitor, increment, limit int64) *BytesMonitor {
	return &BytesMonitor{name: name, pool: pool, poolAllocationSize: increment, limit: limit}
}

func (mm *BytesMonitor) Start(ctx context.Context) {
	if mm.pool != nil {
		mm.mu.curBudget = BoundAccount{mon: mm.pool}
	}
}

func (mm *BytesMonitor) MakeBoundAccount() BoundAccount { return BoundAccount{mon: mm} }

func (mm *BytesMonitor) roundSize(sz int64) int64 {
	const chunk = 10240
	return (sz + chunk - 1) / chunk * chunk
}

func (mm *BytesMonitor) reserveBytes(ctx context.Context, x int64) error {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if mm.mu.curAllocated+x > mm.mu.curBudget.used {
		if mm.pool != nil {
			if err := mm.mu.curBudget.Grow(ctx, mm.poolAllocationSize+x); err != nil {
				return err
			}
		}
	}
	mm.mu.curAllocated += x
	if mm.mu.maxAllocated < mm.mu.curAllocated {
		mm.mu.maxAllocated = mm.mu.curAllocated
	}
	return nil
}

// releaseBytes releases memory previously successfully registered via
// reserveBytes().
func (mm *BytesMonitor) releaseBytes(ctx context.Context, sz int64) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	mm.releaseBytesLocked(ctx, sz)
}

func (mm *BytesMonitor) releaseBytesLocked(ctx context.Context, sz int64) {
	if mm.mu.curAllocated < sz {
		sz = mm.mu.curAllocated
	}
	mm.mu.curAllocated -= sz
}

// releaseBudget relinquishes all the monitor's allocated bytes back to the
// pool.
func (mm *BytesMonitor) releaseBudget(ctx context.Context) {
	mm.mu.curBudget.Clear(ctx)
}

func reportOrPanic(ctx context.Context, format string, args ...interface{}) {
	// In release builds the crash reporter only sends a report.
	fmt.Printf("report: "+format+"\n", args...)
}

// Stop completes a monitoring region.
func (mm *BytesMonitor) Stop(ctx context.Context) { mm.doStop(ctx, true) }

// EmergencyStop completes a monitoring region, and disables checking that all
// accounts were closed.
func (mm *BytesMonitor) EmergencyStop(ctx context.Context) { mm.doStop(ctx, false) }

func (mm *BytesMonitor) doStop(ctx context.Context, check bool) {
	// NB: We need to lock the mutex here and not in the caller since this
	// method is also called from the parent when it stops its children.
	mm.mu.Lock()
	defer mm.mu.Unlock()

	if check && mm.mu.curAllocated != 0 {
		reportOrPanic(ctx, "%s: unexpected %d leftover bytes", mm.name, mm.mu.curAllocated)
		mm.releaseBytes(ctx, mm.mu.curAllocated)
	}

	mm.releaseBudget(ctx)
	mm.mu.stopped = true
	fmt.Printf("%s: stopped, max usage %d\n", mm.name, mm.mu.maxAllocated)
}

func main() {
	ctx := context.Background()
	root := NewMonitor("root", nil, 0, 1<<30)
	root.Start(ctx)
	sqlMon := NewMonitor("sql", root, 10240, 1<<20)
	sqlMon.Start(ctx)

	// A flow's processor grows an account and forgets to Close it on an error
	// path.
	acc := sqlMon.MakeBoundAccount()
	if err := acc.Grow(ctx, 4096); err != nil {
		panic(err)
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // connExecutor teardown stops the session monitor
		defer wg.Done()
		sqlMon.Stop(ctx)
	}()
	wg.Wait()
	fmt.Println("done")
}
