// Project: rivo/tview
// Bug: the Application event loop held the application lock while invoking
// the user-supplied input capture function (installed via SetInputCapture);
// a capture handler that calls app.Draw() re-acquires the same lock.
// Fix: copy the callbacks under the lock, release it, and only then call
// the input capture and root input handler.
package b23tviewcapture_fixed

import (
	"sync"
	"testing"
	"time"
)

type Key int16

const (
	KeyRune Key = iota
	KeyCtrlL
	KeyEscape
)

type EventKey struct {
	key  Key
	r    rune
	when time.Time
}

func (ev *EventKey) Key() Key   { return ev.key }
func (ev *EventKey) Rune() rune { return ev.r }

type Primitive interface {
	Draw(frame []string)
	InputHandler() func(event *EventKey, setFocus func(p Primitive))
}

type TextView struct {
	sync.Mutex
	text string
}

func (tv *TextView) Draw(frame []string) {
	tv.Lock()
	defer tv.Unlock()
	if len(frame) > 0 {
		frame[0] = tv.text
	}
}

func (tv *TextView) InputHandler() func(event *EventKey, setFocus func(p Primitive)) {
	return func(event *EventKey, setFocus func(p Primitive)) {
		tv.Lock()
		tv.text += string(event.Rune())
		tv.Unlock()
	}
}

type Application struct {
	sync.RWMutex
	root         Primitive
	focus        Primitive
	frame        []string
	inputCapture func(event *EventKey) *EventKey
	events       chan *EventKey
	updates      chan func()
	draws        int
}

func NewApplication() *Application {
	return &Application{
		frame:   make([]string, 24),
		events:  make(chan *EventKey, 100),
		updates: make(chan func(), 100),
	}
}

func (a *Application) SetRoot(root Primitive) *Application {
	a.Lock()
	a.root = root
	a.focus = root
	a.Unlock()
	return a
}

func (a *Application) SetInputCapture(capture func(event *EventKey) *EventKey) *Application {
	a.Lock()
	a.inputCapture = capture
	a.Unlock()
	return a
}

func (a *Application) SetFocus(p Primitive) *Application {
	a.Lock()
	a.focus = p
	a.Unlock()
	return a
}

func (a *Application) Draw() *Application {
	a.Lock()
	defer a.Unlock()
	a.draw()
	return a
}

func (a *Application) draw() {
	if a.root == nil {
		return
	}
	a.root.Draw(a.frame)
	a.draws++
}

func (a *Application) QueueUpdate(f func()) *Application {
	a.updates <- f
	return a
}

func (a *Application) handleKey(event *EventKey) {
	a.RLock()
	inputCapture := a.inputCapture
	focus := a.focus
	a.RUnlock()
	if inputCapture != nil {
		event = inputCapture(event)
		if event == nil {
			return
		}
	}
	if focus != nil {
		if handler := focus.InputHandler(); handler != nil {
			handler(event, func(p Primitive) { a.SetFocus(p) })
		}
	}
}

func (a *Application) Run(stop <-chan struct{}) {
	for {
		select {
		case ev := <-a.events:
			a.handleKey(ev)
		case f := <-a.updates:
			f()
		case <-stop:
			return
		}
	}
}

func TestProbe(t *testing.T) {
	app := NewApplication()
	tv := &TextView{}
	app.SetRoot(tv)
	app.SetInputCapture(func(event *EventKey) *EventKey {
		if event.Key() == KeyCtrlL {
			app.Draw()
			return nil
		}
		return event
	})

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		app.Run(stop)
		close(done)
	}()
	app.events <- &EventKey{key: KeyRune, r: 'h', when: time.Now()}
	app.events <- &EventKey{key: KeyCtrlL, when: time.Now()}
	flushed := make(chan struct{})
	app.QueueUpdate(func() { close(flushed) })
	<-flushed
	close(stop)
	<-done
}
