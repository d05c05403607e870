// Project: rivo/tview (textview.go TextView.SetText, Write, Clear and BatchWriter), October 2021.
// Bug: when TextViewWriter batch writing was merged, TextView.SetText was changed to take the TextView's embedded mutex for the whole replacement and then to write the new text with fmt.Fprint(t, text); Fprint calls the TextView's io.Writer method Write, which locks the same sync.Mutex again, so every SetText call hangs the calling goroutine (the application's event loop). Fixed by PR #665 "Fix deadlock in SetText", which writes through the already locked batch writer instead (fix details approximate).
package b117tviewsettext

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Box is the base primitive.
type Box struct {
	title    string
	hasFocus bool
}

func NewBox() *Box { return &Box{} }

// TextViewWriter is a writer that can be used to write to and clear a TextView
// in batches, i.e. multiple writes with the lock only being acquired once.
type TextViewWriter struct {
	t *TextView
}

// Close implements io.Closer for the writer by unlocking the original TextView.
func (w TextViewWriter) Close() error {
	w.t.Unlock()
	return nil
}

// Clear removes all text from the buffer.
func (w TextViewWriter) Clear() {
	w.t.clear()
}

// Write implements the io.Writer interface. It behaves like the TextView's
// Write() method except that it does not acquire the lock.
func (w TextViewWriter) Write(p []byte) (n int, err error) {
	return w.t.write(p)
}

type TextView struct {
	sync.Mutex
	*Box

	buffer      []string
	recentBytes []byte
	index       []int
	lineOffset  int
	changed     func()
}

func NewTextView() *TextView {
	return &TextView{Box: NewBox(), lineOffset: -1}
}

// SetChangedFunc sets a handler function which is called when the text of the
// text view has changed.
func (t *TextView) SetChangedFunc(handler func()) *TextView {
	t.changed = handler
	return t
}

// SetText sets the text of this text view to the provided string. Previously
// contained text will be removed.
func (t *TextView) SetText(text string) *TextView {
	t.Lock()
	defer t.Unlock()
	t.clear()
	fmt.Fprint(t, text)
	return t
}

// GetText returns the current text of this text view.
func (t *TextView) GetText(stripAllTags bool) string {
	t.Lock()
	defer t.Unlock()
	buffer := append([]string(nil), t.buffer...)
	if !stripAllTags {
		buffer = append(buffer, string(t.recentBytes))
	}
	return strings.Join(buffer, "\n")
}

// Clear removes all text from the buffer.
func (t *TextView) Clear() *TextView {
	t.Lock()
	defer t.Unlock()
	t.clear()
	return t
}

func (t *TextView) clear() {
	t.buffer = nil
	t.recentBytes = nil
	t.index = nil
}

// BatchWriter returns a new writer that can be used to write into the buffer
// but without Locking/Unlocking the buffer on every write.
func (t *TextView) BatchWriter() TextViewWriter {
	t.Lock()
	return TextViewWriter{
		t: t,
	}
}

// Write lets us implement the io.Writer interface.
func (t *TextView) Write(p []byte) (n int, err error) {
	t.Lock()
	defer t.Unlock()

	return t.write(p)
}

func (t *TextView) write(p []byte) (n int, err error) {
	// Notify at the end.
	changed := t.changed
	if changed != nil {
		defer func() {
			// We always call the "changed" function in a separate goroutine to avoid
			// deadlocks.
			go changed()
		}()
	}

	// Copy data over.
	newBytes := append(t.recentBytes, p...)
	t.recentBytes = nil

	// Transform the new bytes into strings.
	for index, line := range bytes.Split(newBytes, []byte("\n")) {
		if index == 0 {
			if len(t.buffer) == 0 {
				t.buffer = []string{string(line)}
			} else {
				t.buffer[len(t.buffer)-1] += string(line)
			}
		} else {
			t.buffer = append(t.buffer, string(line))
		}
	}

	// Reset the index.
	t.index = nil

	return len(p), nil
}

func TestB117tviewsettext(t *testing.T) {
	logView := NewTextView()
	redraws := make(chan struct{}, 16)
	logView.SetChangedFunc(func() {
		select {
		case redraws <- struct{}{}: // app.Draw()
		default:
		}
	})

	fmt.Fprintf(logView, "starting build\n")
	fmt.Fprintf(logView, "compiling...\n")

	// The "clear log" key handler replaces the content.
	logView.SetText("[yellow]log cleared[white]\n")

	if got := logView.GetText(false); !strings.Contains(got, "log cleared") {
		t.Fatalf("unexpected text %q", got)
	}
}
