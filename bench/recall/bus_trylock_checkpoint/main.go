// Pattern: grafana/loki clients/pkg/promtail targets/file tailer + positions:
// the tailer holds its mutex while reading a line, advancing the offset and
// handing the entry to the client channel. The shipping goroutine wants to
// checkpoint the tailer's offset between batches, but does so best-effort
// with TryLock: if the tailer is busy the checkpoint is skipped and retried
// on the next batch. Once the entry channel is closed the tailer has exited,
// so the final checkpoint may take the lock unconditionally.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

const entryBuffer = 128

type Entry struct {
	Path   string
	Line   string
	Offset int64
}

type tailer struct {
	mu     sync.Mutex
	path   string
	offset int64
	lines  []string
	out    chan Entry
}

func (t *tailer) readLoop() {
	defer close(t.out)
	for i := range t.lines {
		t.mu.Lock()
		line := t.lines[i]
		t.offset += int64(len(line)) + 1
		t.out <- Entry{Path: t.path, Line: line, Offset: t.offset}
		t.mu.Unlock()
	}
}

type positions struct {
	saved map[string]int64
	skips int
}

func (p *positions) checkpoint(t *tailer) {
	if !t.mu.TryLock() {
		p.skips++
		return
	}
	p.saved[t.path] = t.offset
	t.mu.Unlock()
}

func main() {
	var src []string
	for i := 0; i < 3000; i++ {
		src = append(src, fmt.Sprintf("level=info msg=%q seq=%d", strings.Repeat("x", i%17), i))
	}
	t := &tailer{path: "/var/log/app.log", lines: src, out: make(chan Entry, entryBuffer)}
	pos := &positions{saved: make(map[string]int64)}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		batch := make([]Entry, 0, 100)
		shipped := 0
		for e := range t.out {
			batch = append(batch, e)
			if len(batch) == cap(batch) {
				time.Sleep(100 * time.Microsecond) // push to the remote endpoint
				shipped += len(batch)
				batch = batch[:0]
				pos.checkpoint(t)
			}
		}
		shipped += len(batch)
		// t.out is closed: the tailer has returned and no longer holds t.mu.
		t.mu.Lock()
		pos.saved[t.path] = t.offset
		t.mu.Unlock()
		fmt.Printf("shipped=%d final_offset=%d skipped_checkpoints=%d\n",
			shipped, pos.saved[t.path], pos.skips)
	}()

	go t.readLoop()
	wg.Wait()
}
