// Project: fyne-io/fyne (widget/entry.go)
// Bug: Entry.SetText took e.propertyLock and, while still holding it,
//      refreshed the widget: SetText -> updateTextAndRefresh -> Refresh ->
//      BaseWidget.Refresh -> entryRenderer.Refresh -> Entry.SelectedText,
//      and the exported SelectedText takes e.propertyLock.RLock again on the
//      same goroutine -> self-deadlock.
// Fix: SetText updates the fields under the lock and releases it before
//      calling Refresh.

package b18fyneentry_fixed

import (
	"strings"
	"sync"
	"testing"
)

type Position struct{ X, Y float32 }

type Size struct{ Width, Height float32 }

type WidgetRenderer interface {
	Layout(Size)
	MinSize() Size
	Refresh()
	Destroy()
}

type Widget interface {
	CreateRenderer() WidgetRenderer
	Refresh()
}

var (
	renderersLock sync.Mutex
	renderers     = map[Widget]WidgetRenderer{}
)

// cacheRenderer returns the renderer for a widget, creating it once.
func cacheRenderer(wid Widget) WidgetRenderer {
	renderersLock.Lock()
	r, ok := renderers[wid]
	renderersLock.Unlock()
	if !ok {
		r = wid.CreateRenderer()
		renderersLock.Lock()
		renderers[wid] = r
		renderersLock.Unlock()
	}
	return r
}

type BaseWidget struct {
	size     Size
	position Position
	Hidden   bool
	impl     Widget
}

func (w *BaseWidget) ExtendBaseWidget(wid Widget) { w.impl = wid }

// Refresh causes this widget to be redrawn in its current state.
func (w *BaseWidget) Refresh() {
	if w.impl == nil {
		return
	}
	cacheRenderer(w.impl).Refresh()
}

type Entry struct {
	BaseWidget
	Text        string
	PlaceHolder string
	OnChanged   func(string)
	Password    bool
	MultiLine   bool

	CursorRow, CursorColumn int
	OnCursorChanged         func()

	propertyLock   sync.RWMutex
	selecting      bool
	selectRow      int
	selectColumn   int
	dirty          bool
	validationText string
}

func NewEntry() *Entry {
	e := &Entry{}
	e.ExtendBaseWidget(e)
	return e
}

func (e *Entry) CreateRenderer() WidgetRenderer { return &entryRenderer{entry: e} }

// SelectedText returns the text currently selected in this Entry.
func (e *Entry) SelectedText() string {
	e.propertyLock.RLock()
	defer e.propertyLock.RUnlock()
	if !e.selecting || e.selectRow != e.CursorRow {
		return ""
	}
	start, stop := e.selectColumn, e.CursorColumn
	if start > stop {
		start, stop = stop, start
	}
	lines := strings.Split(e.Text, "\n")
	if e.CursorRow >= len(lines) || stop > len(lines[e.CursorRow]) {
		return ""
	}
	return lines[e.CursorRow][start:stop]
}

// SetText manually sets the text of the Entry to the given text value.
func (e *Entry) SetText(text string) {
	e.propertyLock.Lock()
	changed := e.updateText(text)
	e.propertyLock.Unlock()

	// The renderer reads properties through the locking accessors, so the
	// refresh must happen after propertyLock has been released.
	if changed && e.OnChanged != nil {
		e.OnChanged(text)
	}
	e.Refresh()
}

func (e *Entry) updateText(text string) bool {
	changed := e.Text != text
	e.Text = text
	if e.CursorColumn > len(text) {
		e.CursorColumn = len(text)
	}
	e.selecting = false
	e.dirty = changed
	return changed
}

type entryRenderer struct {
	entry        *Entry
	objects      []string
	selectedText string
	minSize      Size
}

func (r *entryRenderer) Layout(s Size)     { r.entry.size = s }
func (r *entryRenderer) MinSize() Size     { return r.minSize }
func (r *entryRenderer) Destroy()          {}
func (r *entryRenderer) Objects() []string { return r.objects }

func (r *entryRenderer) Refresh() {
	// the selection rectangles are rebuilt from the selected text
	r.selectedText = r.entry.SelectedText()
	r.minSize = Size{Width: float32(8 * len(r.selectedText)), Height: 20}
}

func TestSetTextFromBinding(t *testing.T) {
	e := NewEntry()
	e.PlaceHolder = "user name"
	changes := make(chan string, 1)
	e.OnChanged = func(s string) { changes <- s }

	done := make(chan struct{})
	go func() { // data binding listener pushing a new value
		defer close(done)
		e.SetText("gopher")
	}()
	<-done
	if got := <-changes; got != "gopher" {
		t.Fatalf("OnChanged got %q", got)
	}
}
