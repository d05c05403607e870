// Project: charmbracelet/bubbletea (standard_renderer.go standardRenderer.stop / listen / flush), v0.23-v0.24, 2023 (approximate).
// Bug: stop() flushed, then took r.mtx, cleared the line and only then signalled r.done (r.once.Do(func() { r.done <- struct{}{} }))
// while still holding r.mtx; if the framerate ticker fired in the meantime, the listen goroutine was inside flush() blocked on
// r.mtx and could never receive from r.done, so Program shutdown hung. The fix stops the renderer before acquiring the mutex
// ("Stop the renderer before acquiring the mutex to avoid a deadlock").
package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// slowTTY stands in for the terminal output; every write takes a while.
type slowTTY struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (t *slowTTY) Write(p []byte) (int, error) {
	time.Sleep(40 * time.Millisecond)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.out.Write(p)
}

type standardRenderer struct {
	mtx *sync.Mutex
	out io.Writer

	buf                bytes.Buffer
	queuedMessageLines []string
	framerate          time.Duration
	ticker             *time.Ticker
	done               chan struct{}
	lastRender         string
	linesRendered      int
	once               sync.Once
}

func newRenderer(out io.Writer) *standardRenderer {
	return &standardRenderer{
		out:       out,
		mtx:       &sync.Mutex{},
		done:      make(chan struct{}),
		framerate: time.Second / 100,
	}
}

// start starts the renderer.
func (r *standardRenderer) start() {
	if r.ticker == nil {
		r.ticker = time.NewTicker(r.framerate)
	}
	go r.listen()
}

// stop permanently halts the renderer, rendering the final frame.
func (r *standardRenderer) stop() {
	// Stop the renderer before acquiring the mutex to avoid a deadlock.
	r.once.Do(func() {
		r.done <- struct{}{}
	})

	// flush locks the mutex
	r.flush()

	r.mtx.Lock()
	defer r.mtx.Unlock()

	r.clearLine()
}

func (r *standardRenderer) clearLine() { _, _ = io.WriteString(r.out, "\x1b[2K\r") }

// listen waits for ticks on the ticker, or a signal to stop the renderer.
func (r *standardRenderer) listen() {
	for {
		select {
		case <-r.done:
			r.ticker.Stop()
			return

		case <-r.ticker.C:
			r.flush()
		}
	}
}

// flush renders the buffer.
func (r *standardRenderer) flush() {
	r.mtx.Lock()
	defer r.mtx.Unlock()

	if r.buf.Len() == 0 || r.buf.String() == r.lastRender {
		// Nothing to do
		return
	}
	out := new(bytes.Buffer)
	for _, l := range r.queuedMessageLines {
		out.WriteString(l + "\r\n")
	}
	r.queuedMessageLines = []string{}
	out.WriteString(r.buf.String())
	r.linesRendered = strings.Count(r.buf.String(), "\n") + 1
	_, _ = r.out.Write(out.Bytes())
	r.lastRender = r.buf.String()
	r.buf.Reset()
}

// write writes to the internal buffer. The buffer will be outputted via the
// ticker which calls flush().
func (r *standardRenderer) write(s string) {
	r.mtx.Lock()
	defer r.mtx.Unlock()
	r.buf.Reset()
	if s == "" {
		s = " "
	}
	r.buf.WriteString(s)
}

// ---- tea.go ----

type Program struct {
	renderer *standardRenderer
	finished chan struct{}
}

func (p *Program) shutdown(kill bool) {
	if p.renderer != nil {
		p.renderer.stop()
	}
	close(p.finished)
}

func main() {
	tty := &slowTTY{}
	p := &Program{renderer: newRenderer(tty), finished: make(chan struct{})}
	p.renderer.start()
	p.renderer.write("Hello, bubbletea!\nPress q to quit.")
	time.Sleep(80 * time.Millisecond) // first frame gets flushed by the ticker
	p.renderer.write("Bye!")          // final view, then tea.Quit
	p.shutdown(false)
	<-p.finished
	fmt.Printf("%q\n", tty.out.String())
}
