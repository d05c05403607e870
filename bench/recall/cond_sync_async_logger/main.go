// Pattern: glog/klog-style file logger with a sync vs. buffered mode
// (compare zapcore.BufferedWriteSyncer vs. zapcore.Lock). In sync mode Write
// holds w.mu and flushes inline; in async mode a background daemon flushes.
// The mutex is taken by Write only `if w.sync` and by flush only
// `if !w.sync`; w.sync is immutable after New, so the conditions are
// complementary and never both true on one call path.
package main

import (
	"bytes"
	"fmt"
	"sync"
	"time"
)

type Writer struct {
	sync bool // immutable after construction

	mu   sync.Mutex
	buf  []byte
	out  bytes.Buffer
	in   chan []byte
	done chan struct{}
}

func New(syncMode bool) *Writer {
	w := &Writer{sync: syncMode}
	if !syncMode {
		w.in = make(chan []byte, 16)
		w.done = make(chan struct{})
		go w.flushDaemon()
	}
	return w
}

func (w *Writer) Write(p []byte) (int, error) {
	if w.sync {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.buf = append(w.buf, p...)
		w.flush() // sync mode: flush does not lock
		return len(p), nil
	}
	cp := append([]byte(nil), p...)
	w.in <- cp
	return len(p), nil
}

// flush writes the buffer out. In async mode it takes the lock itself, in
// sync mode the caller (Write) already holds it.
func (w *Writer) flush() {
	if !w.sync {
		w.mu.Lock()
		defer w.mu.Unlock()
	}
	w.out.Write(w.buf)
	w.buf = w.buf[:0]
}

func (w *Writer) flushDaemon() {
	defer close(w.done)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case p, ok := <-w.in:
			if !ok {
				w.flush()
				return
			}
			w.mu.Lock()
			w.buf = append(w.buf, p...)
			w.mu.Unlock()
		case <-tick.C:
			w.flush()
		}
	}
}

func (w *Writer) Close() string {
	if !w.sync {
		close(w.in)
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

func main() {
	for _, mode := range []bool{true, false} {
		w := New(mode)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					fmt.Fprintf(w, "g%d line %d\n", g, i)
				}
			}(g)
		}
		wg.Wait()
		out := w.Close()
		fmt.Printf("sync=%v bytes=%d\n", mode, len(out))
	}
}
