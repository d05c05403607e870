// Project: pingcap/tidb (util/chunk/row_container.go, util/chunk/list.go, util/memory/tracker.go, used by the sort and hash join executors), v4.0, 2020 (approximate).
// Bug: RowContainer.Add holds c.m.RLock while it appends a chunk to the in-memory List, whose memory tracker runs SpillDiskAction.Action when tidb_mem_quota_query is exceeded; the action marks the container as spilling, starts SpillToDisk in a goroutine and waits on its cond until the spill finishes, but SpillToDisk first needs c.m.Lock, which waits for the read lock held by Add, so the query hangs (fixed by not waiting on the first trigger and letting SpillToDisk set the spilling status itself once it holds c.m).
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// ActionOnExceed is the action taken when memory usage exceeds memory quota.
type ActionOnExceed interface{ Action(t *Tracker) }

type Tracker struct {
	actionMu struct {
		sync.Mutex
		actionOnExceed ActionOnExceed
	}
	bytesConsumed int64
	bytesLimit    int64
	parent        *Tracker
}

func NewTracker(limit int64) *Tracker                 { return &Tracker{bytesLimit: limit} }
func (t *Tracker) AttachTo(parent *Tracker)           { t.parent = parent }
func (t *Tracker) SetActionOnExceed(a ActionOnExceed) { t.actionMu.actionOnExceed = a }
func (t *Tracker) CheckExceed() bool {
	return t.bytesLimit > 0 && atomic.LoadInt64(&t.bytesConsumed) >= t.bytesLimit
}

// Consume is used to consume a memory usage. "bytes" can be a negative value.
func (t *Tracker) Consume(bytes int64) {
	var rootExceed *Tracker
	for tracker := t; tracker != nil; tracker = tracker.parent {
		if atomic.AddInt64(&tracker.bytesConsumed, bytes) >= tracker.bytesLimit && tracker.bytesLimit > 0 {
			rootExceed = tracker
		}
	}
	if bytes > 0 && rootExceed != nil {
		rootExceed.actionMu.Lock()
		defer rootExceed.actionMu.Unlock()
		if rootExceed.actionMu.actionOnExceed != nil {
			rootExceed.actionMu.actionOnExceed.Action(rootExceed)
		}
	}
}

type Chunk struct{ rows [][]byte }

func (c *Chunk) MemoryUsage() int64 { return int64(len(c.rows) * len(c.rows[0])) }

type List struct {
	chunks     []*Chunk
	memTracker *Tracker
}

func (l *List) Add(chk *Chunk) {
	l.chunks = append(l.chunks, chk)
	l.memTracker.Consume(chk.MemoryUsage())
}
func (l *List) Clear() {
	for _, chk := range l.chunks {
		l.memTracker.Consume(-chk.MemoryUsage())
	}
	l.chunks = nil
}

type ListInDisk struct{ buf [][]byte }

func (l *ListInDisk) Add(chk *Chunk) error { l.buf = append(l.buf, chk.rows...); return nil }

type spillStatus uint32

const (
	notSpilled spillStatus = iota
	spilling
	spilledYet
)

type spillStatusCond struct {
	*sync.Cond
	status spillStatus
}

type RowContainer struct {
	m struct {
		// RWMutex guarantees spill and get operator for rowContainer is mutually exclusive.
		sync.RWMutex
		records       *List
		recordsInDisk *ListInDisk
	}
	memTracker  *Tracker
	actionSpill *SpillDiskAction
}

func NewRowContainer() *RowContainer {
	rc := &RowContainer{memTracker: NewTracker(-1)}
	rc.m.records = &List{memTracker: NewTracker(-1)}
	rc.m.records.memTracker.AttachTo(rc.memTracker)
	return rc
}
func (c *RowContainer) alreadySpilled() bool { return c.m.recordsInDisk != nil }

// Add appends a chunk into the RowContainer.
func (c *RowContainer) Add(chk *Chunk) (err error) {
	c.m.RLock()
	defer c.m.RUnlock()
	if c.alreadySpilled() {
		err = c.m.recordsInDisk.Add(chk)
	} else {
		c.m.records.Add(chk)
	}
	return
}

// SpillToDisk spills data to disk.
func (c *RowContainer) SpillToDisk() {
	c.m.Lock()
	defer c.m.Unlock()
	if c.alreadySpilled() {
		return
	}
	if c.actionSpill != nil {
		defer c.actionSpill.cond.Broadcast()
		defer c.actionSpill.setStatus(spilledYet)
	}
	c.m.recordsInDisk = &ListInDisk{}
	for _, chk := range c.m.records.chunks {
		_ = c.m.recordsInDisk.Add(chk)
	}
	c.m.records.Clear()
}

func (c *RowContainer) ActionSpill() *SpillDiskAction {
	c.actionSpill = &SpillDiskAction{c: c, cond: spillStatusCond{sync.NewCond(new(sync.Mutex)), notSpilled}}
	return c.actionSpill
}

// SpillDiskAction implements memory.ActionOnExceed for chunk.List.
type SpillDiskAction struct {
	fallbackAction ActionOnExceed
	c              *RowContainer
	m              sync.Mutex
	once           sync.Once
	cond           spillStatusCond
}

func (a *SpillDiskAction) getStatus() spillStatus {
	a.cond.L.Lock()
	defer a.cond.L.Unlock()
	return a.cond.status
}
func (a *SpillDiskAction) setStatus(status spillStatus) {
	a.cond.L.Lock()
	defer a.cond.L.Unlock()
	a.cond.status = status
}

// Action sends a signal to trigger spillToDisk method of RowContainer and if it is already triggered before, call its fallbackAction.
func (a *SpillDiskAction) Action(t *Tracker) {
	a.m.Lock()
	defer a.m.Unlock()
	if a.getStatus() == notSpilled {
		a.once.Do(func() {
			fmt.Println("memory exceeds quota, spill to disk now.", atomic.LoadInt64(&t.bytesConsumed), t.bytesLimit)
			a.setStatus(spilling)
			go a.c.SpillToDisk()
		})
	}
	a.cond.L.Lock()
	for a.cond.status == spilling {
		a.cond.Wait()
	}
	a.cond.L.Unlock()
	if t.CheckExceed() && a.fallbackAction != nil {
		a.fallbackAction.Action(t) // e.g. PanicOnExceed: cancel the query
	}
}

func (a *SpillDiskAction) waitSpilled() {
	a.cond.L.Lock()
	for a.cond.status != spilledYet {
		a.cond.Wait()
	}
	a.cond.L.Unlock()
}

func main() {
	stmtTracker := NewTracker(1000) // tidb_mem_quota_query for this statement
	rc := NewRowContainer()
	rc.memTracker.AttachTo(stmtTracker)
	stmtTracker.SetActionOnExceed(rc.ActionSpill())

	for i := 0; i < 4; i++ { // the sort executor buffers its child's chunks
		_ = rc.Add(&Chunk{rows: [][]byte{make([]byte, 200), make([]byte, 200)}})
	}
	rc.actionSpill.waitSpilled()
	fmt.Println("spilled rows:", len(rc.m.recordsInDisk.buf))
}
