package implicitstring

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// fmt.Fprint writes to the io.Writer it is given: a view that sets its
// text by printing into itself, under its lock, runs its own Write, which
// locks it again.
type TextView struct {
	mu    sync.Mutex
	lines []string
}

func (t *TextView) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, string(p))
	return len(p), nil
}

func (t *TextView) SetText(text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = nil
	fmt.Fprint(t, text) // want `TextView.mu locked again by TextView.Write`
}

func (t *TextView) Append(text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	io.WriteString(t, text) // want `TextView.mu locked again by TextView.Write`
}

// Correct: the view prints into a builder under its lock, and into
// itself only once the lock is released.
func (t *TextView) Reset(text string) {
	var b strings.Builder
	t.mu.Lock()
	t.lines = nil
	fmt.Fprintf(&b, "%s\n", text)
	t.mu.Unlock()
	fmt.Fprint(t, b.String())
}

// Correct: a writer whose Write takes a lock of its own.
type LogSink struct {
	mu  sync.Mutex
	out sync.Mutex
	n   int
}

func (s *LogSink) Write(p []byte) (int, error) {
	s.out.Lock()
	s.n += len(p)
	s.out.Unlock()
	return len(p), nil
}

func (s *LogSink) Flush(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintln(s, msg)
}
