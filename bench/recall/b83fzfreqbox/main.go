// Project: junegunn/fzf (src/terminal.go Terminal.Loop, src/util/eventbox.go), early releases around 2015 (approximate).
// Bug: the key-handling loop of Terminal.Loop held t.mutex while its req helper called t.reqBox.Set, which takes the
// EventBox's cond.L; the rendering goroutine runs inside t.reqBox.Wait (holding cond.L) and locks t.mutex to redraw,
// so when a preview result wakes the renderer while a key action is running, the two goroutines deadlock (AB-BA).
// The fix collects the requests in a slice and sets them only after "t.mutex.Unlock() // Must be unlocked before touching reqBox".
package main

import (
	"fmt"
	"sync"
	"time"
)

// ---- util/eventbox.go ----

type EventType int

type Events map[EventType]interface{}

type EventBox struct {
	events Events
	cond   *sync.Cond
	ignore map[EventType]bool
}

func NewEventBox() *EventBox {
	return &EventBox{make(Events), sync.NewCond(&sync.Mutex{}), make(map[EventType]bool)}
}

// Wait blocks the goroutine until signaled and runs the callback with the lock held.
func (b *EventBox) Wait(callback func(*Events)) {
	b.cond.L.Lock()
	if len(b.events) == 0 {
		b.cond.Wait()
	}
	callback(&b.events)
	b.cond.L.Unlock()
}

// Set turns on the event type on the box
func (b *EventBox) Set(event EventType, value interface{}) {
	b.cond.L.Lock()
	b.events[event] = value
	if _, found := b.ignore[event]; !found {
		b.cond.Broadcast()
	}
	b.cond.L.Unlock()
}

func (events *Events) Clear() {
	for event := range *events {
		delete(*events, event)
	}
}

// ---- terminal.go ----

const (
	reqPrompt EventType = iota
	reqInfo
	reqList
	reqRefresh
	reqPreviewDisplay
	reqClose
)

type actionType int

const (
	actExecute actionType = iota
	actAccept
)

type action struct {
	t actionType
	a string
}

type Terminal struct {
	mutex   sync.Mutex
	reqBox  *EventBox
	input   []rune
	cx      int
	keymap  map[string][]action
	keys    chan string
	preview string
	done    sync.WaitGroup
}

func (t *Terminal) printPrompt()              { _ = string(t.input) }
func (t *Terminal) printPreview(s string)     { t.preview = s }
func (t *Terminal) executeCommand(cmd string) { time.Sleep(100 * time.Millisecond) } // runs the command with the UI paused
func (t *Terminal) GetChar() string           { return <-t.keys }

func (t *Terminal) Loop() {
	// rendering goroutine
	t.done.Add(1)
	go func() {
		defer t.done.Done()
		for looping := true; looping; {
			t.reqBox.Wait(func(events *Events) {
				defer events.Clear()
				t.mutex.Lock()
				for req, value := range *events {
					switch req {
					case reqPrompt, reqRefresh:
						t.printPrompt()
					case reqPreviewDisplay:
						t.printPreview(value.(string))
					case reqClose:
						looping = false
					}
				}
				t.mutex.Unlock()
			})
		}
	}()

	// preview goroutine: runs the preview command and reports the result
	go func() {
		time.Sleep(30 * time.Millisecond)
		t.reqBox.Set(reqPreviewDisplay, "preview of item")
	}()

	for looping := true; looping; {
		event := t.GetChar()

		t.mutex.Lock()
		req := func(evts ...EventType) {
			for _, e := range evts {
				t.reqBox.Set(e, nil)
				if e == reqClose {
					looping = false
				}
			}
		}
		for _, a := range t.keymap[event] {
			switch a.t {
			case actExecute:
				t.executeCommand(a.a)
				req(reqRefresh)
			case actAccept:
				req(reqClose)
			}
		}
		t.mutex.Unlock()
	}
	t.done.Wait()
}

func main() {
	t := &Terminal{
		reqBox: NewEventBox(),
		keymap: map[string][]action{"ctrl-o": {{actExecute, "vim {}"}}, "enter": {{actAccept, ""}}},
		keys:   make(chan string, 2),
	}
	t.keys <- "ctrl-o"
	t.keys <- "enter"
	t.Loop()
	fmt.Println("exited:", t.preview)
}
