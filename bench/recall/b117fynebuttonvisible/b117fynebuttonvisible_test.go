// Project: fyne-io/fyne (widget/button.go Button.CreateRenderer and buttonRenderer.updateIconAndText, widget/widget.go BaseWidget.MinSize and Visible, internal/cache/widget.go Renderer), v2.5.0, September 2024.
// Bug: the first BaseWidget.MinSize of a button with an icon creates its renderer through cache.Renderer, and Button.CreateRenderer read-locks the button's propertyLock while it builds the renderer and calls updateIconAndText, which asks r.button.Visible(); BaseWidget.Visible read-locks the same propertyLock again. When another goroutine calls Button.SetText (propertyLock.Lock) between the two read locks, the nested RLock queues behind the writer, the writer waits for the first reader and the UI deadlocks (issue #5114, fixed by PR #5115, which reads r.button.Hidden directly in updateIconAndText, "must be called with r.button.propertyLock RLocked").
package b117fynebuttonvisible

import (
	"sync"
	"testing"
	"time"
)

type Size struct{ Width, Height float32 }

type Resource interface{ Name() string }

type Theme interface {
	Size(name string) float32
}

var currentTheme Theme // fyne.CurrentApp().Settings().Theme()

type Widget interface {
	MinSize() Size
	CreateRenderer() WidgetRenderer
}

type WidgetRenderer interface {
	MinSize() Size
	Refresh()
}

// internal/cache/widget.go
var (
	renderersLock sync.RWMutex
	renderers     = map[Widget]WidgetRenderer{}
)

func Renderer(wid Widget) WidgetRenderer {
	renderersLock.RLock()
	r, ok := renderers[wid]
	renderersLock.RUnlock()
	if !ok {
		r = wid.CreateRenderer()
		renderersLock.Lock()
		renderers[wid] = r
		renderersLock.Unlock()
	}
	return r
}

// widget/widget.go
type BaseWidget struct {
	Hidden       bool
	impl         Widget
	propertyLock sync.RWMutex
}

func (w *BaseWidget) ExtendBaseWidget(wid Widget) {
	w.propertyLock.Lock()
	defer w.propertyLock.Unlock()
	if w.impl == nil {
		w.impl = wid
	}
}

func (w *BaseWidget) super() Widget {
	w.propertyLock.RLock()
	defer w.propertyLock.RUnlock()
	return w.impl
}

func (w *BaseWidget) Theme() Theme { return currentTheme }

func (w *BaseWidget) MinSize() Size {
	impl := w.super()
	return Renderer(impl).MinSize()
}

// Visible returns whether or not this widget should be visible.
func (w *BaseWidget) Visible() bool {
	w.propertyLock.RLock()
	defer w.propertyLock.RUnlock()
	return !w.Hidden
}

func (w *BaseWidget) Refresh() { Renderer(w.super()).Refresh() }

type DisableableWidget struct {
	BaseWidget
	disabled bool
}

// widget/button.go
type Button struct {
	DisableableWidget
	Text     string
	Icon     Resource
	OnTapped func()
}

func NewButtonWithIcon(label string, icon Resource, tapped func()) *Button {
	b := &Button{Text: label, Icon: icon, OnTapped: tapped}
	b.ExtendBaseWidget(b)
	return b
}

func (b *Button) MinSize() Size {
	b.ExtendBaseWidget(b)
	return b.BaseWidget.MinSize()
}

// SetText allows the button label to be changed
func (b *Button) SetText(text string) {
	b.propertyLock.Lock()
	b.Text = text
	b.propertyLock.Unlock()

	b.Refresh()
}

type canvasImage struct{ Hidden bool }

type buttonRenderer struct {
	icon   *canvasImage
	label  string
	inset  float32
	button *Button
}

func (b *Button) CreateRenderer() WidgetRenderer {
	b.ExtendBaseWidget(b)
	th := b.Theme()

	b.propertyLock.RLock()
	defer b.propertyLock.RUnlock()
	r := &buttonRenderer{button: b, label: b.Text}
	r.inset = th.Size("innerPadding")
	r.updateIconAndText()
	return r
}

func (r *buttonRenderer) MinSize() Size {
	return Size{Width: float32(len(r.label))*8 + 2*r.inset, Height: 20 + 2*r.inset}
}

func (r *buttonRenderer) Refresh() {
	r.button.propertyLock.RLock()
	defer r.button.propertyLock.RUnlock()
	r.label = r.button.Text
	r.updateIconAndText()
}

func (r *buttonRenderer) updateIconAndText() {
	if r.button.Icon != nil && r.button.Visible() {
		if r.icon == nil {
			r.icon = &canvasImage{} // canvas.NewImageFromResource(r.button.Icon)
		}
		r.icon.Hidden = false
	} else if r.icon != nil {
		r.icon.Hidden = true
	}
}

type staticResource struct{ name string }

func (s *staticResource) Name() string { return s.name }

// slowTheme is a custom user theme whose first size lookup is slow.
type slowTheme struct {
	once            sync.Once
	inTheme, resume chan struct{}
}

func (s *slowTheme) Size(string) float32 {
	s.once.Do(func() {
		close(s.inTheme)
		<-s.resume
	})
	return 4
}

func TestB117fynebuttonvisible(t *testing.T) {
	th := &slowTheme{inTheme: make(chan struct{}), resume: make(chan struct{})}
	currentTheme = th
	b := NewButtonWithIcon("OK", &staticResource{name: "confirm.svg"}, func() {})

	laidOut := make(chan struct{})
	go func() { // the driver lays out the window content
		_ = b.MinSize()
		close(laidOut)
	}()
	<-th.inTheme // CreateRenderer holds propertyLock.RLock

	relabelled := make(chan struct{})
	go func() { // a data update relabels the button
		b.SetText("Cancel")
		close(relabelled)
	}()
	time.Sleep(100 * time.Millisecond) // SetText is queued on propertyLock.Lock
	close(th.resume)

	<-laidOut
	<-relabelled
}
