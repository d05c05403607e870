// Shape of pingcap/tidb issue #16944 (fixed by PR #16987): util/memory
// Tracker.remove holds t.mu and calls t.Consume; when the tracker is still
// over its quota the exceed action (an ActionOnExceed interface value) runs
// on the same tracker and LogOnExceed formats it with t.String(), whose
// toString locks t.mu again.
package main

import (
	"bytes"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
)

// ActionOnExceed is what a Tracker runs when its quota is exceeded.
type ActionOnExceed interface {
	Action(t *Tracker)
}

// LogOnExceed logs the tracker tree once.
type LogOnExceed struct {
	mutex  sync.Mutex
	acted  bool
	ConnID uint64
}

func (a *LogOnExceed) Action(t *Tracker) {
	a.mutex.Lock()
	defer a.mutex.Unlock()
	if !a.acted {
		a.acted = true
		log.Printf("[WARN] memory exceeds quota, conn=%d, tracker=%s", a.ConnID, t.String())
	}
}

type Tracker struct {
	mu struct {
		sync.Mutex
		children []*Tracker
	}
	actionMu struct {
		sync.Mutex
		actionOnExceed ActionOnExceed
	}
	label         string
	bytesConsumed int64
	bytesLimit    int64
	parent        *Tracker
}

func NewTracker(label string, limit int64) *Tracker {
	return &Tracker{label: label, bytesLimit: limit}
}

func (t *Tracker) SetBytesLimit(limit int64) { t.bytesLimit = limit }

func (t *Tracker) SetActionOnExceed(a ActionOnExceed) {
	t.actionMu.Lock()
	t.actionMu.actionOnExceed = a
	t.actionMu.Unlock()
}

func (t *Tracker) AttachTo(parent *Tracker) {
	parent.mu.Lock()
	parent.mu.children = append(parent.mu.children, t)
	parent.mu.Unlock()
	t.parent = parent
	parent.Consume(t.BytesConsumed())
}

// Detach is called when an executor is closed.
func (t *Tracker) Detach() {
	if t.parent != nil {
		t.parent.remove(t)
	}
}

func (t *Tracker) remove(oldChild *Tracker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, child := range t.mu.children {
		if child != oldChild {
			continue
		}
		t.Consume(-oldChild.BytesConsumed())
		oldChild.parent = nil
		t.mu.children = append(t.mu.children[:i], t.mu.children[i+1:]...)
		break
	}
}

func (t *Tracker) BytesConsumed() int64 { return atomic.LoadInt64(&t.bytesConsumed) }

func (t *Tracker) Consume(bytes int64) {
	var rootExceed *Tracker
	for tracker := t; tracker != nil; tracker = tracker.parent {
		if atomic.AddInt64(&tracker.bytesConsumed, bytes) >= tracker.bytesLimit && tracker.bytesLimit > 0 {
			rootExceed = tracker
		}
	}
	if rootExceed != nil {
		rootExceed.actionMu.Lock()
		defer rootExceed.actionMu.Unlock()
		if rootExceed.actionMu.actionOnExceed != nil {
			rootExceed.actionMu.actionOnExceed.Action(rootExceed)
		}
	}
}

// consumeNegative releases memory without running the exceed action.
func (t *Tracker) consumeNegative(bytes int64) {
	for tracker := t; tracker != nil; tracker = tracker.parent {
		atomic.AddInt64(&tracker.bytesConsumed, bytes)
	}
}

func (t *Tracker) String() string {
	buffer := bytes.NewBufferString("\n")
	t.toString("", buffer)
	return buffer.String()
}

func (t *Tracker) toString(indent string, buffer *bytes.Buffer) {
	fmt.Fprintf(buffer, "%s%q{\n", indent, t.label)
	if t.bytesLimit > 0 {
		fmt.Fprintf(buffer, "%s  \"quota\": %d\n", indent, t.bytesLimit)
	}
	fmt.Fprintf(buffer, "%s  \"consumption\": %d\n", indent, t.BytesConsumed())
	t.mu.Lock()
	for _, c := range t.mu.children {
		c.toString(indent+"  ", buffer)
	}
	t.mu.Unlock()
	buffer.WriteString(indent + "}\n")
}

// Executor side.
type Executor interface {
	Open() error
	Close() error
}

type baseExecutor struct {
	id         string
	memTracker *Tracker
}

type hashJoinExec struct {
	baseExecutor
	rows int
}

func (e *hashJoinExec) Open() error {
	e.memTracker.Consume(int64(e.rows) * 64)
	return nil
}

func (e *hashJoinExec) Close() error {
	e.memTracker.Detach()
	return nil
}

type StmtCtx struct {
	MemTracker *Tracker
	execs      []Executor
}

func main() {
	stmt := &StmtCtx{MemTracker: NewTracker("query", 0)}
	for i, rows := range []int{100, 200} {
		e := &hashJoinExec{baseExecutor{id: fmt.Sprintf("HashJoin_%d", i), memTracker: NewTracker(fmt.Sprintf("HashJoin_%d", i), 0)}, rows}
		e.memTracker.AttachTo(stmt.MemTracker)
		e.Open()
		stmt.execs = append(stmt.execs, e)
	}
	// tidb_mem_quota_query lowered while the statement runs: the root is
	// now over its quota but has not acted yet.
	stmt.MemTracker.SetBytesLimit(1000)
	stmt.MemTracker.SetActionOnExceed(&LogOnExceed{ConnID: 7})

	for _, e := range stmt.execs {
		e.Close()
	}
	fmt.Println("statement finished, consumed", stmt.MemTracker.BytesConsumed())
}
