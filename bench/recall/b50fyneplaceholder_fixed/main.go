// Project: fyne-io/fyne (Go GUI toolkit), v2.4.3, January 2024.
// Files: widget/entry.go (Entry.TypedKey, selectingKeyHandler, eraseSelectionAndUpdate,
// eraseSelection, updateText, selectAll, setFieldsAndRefresh, SetPlaceHolder, SetText).
// Issue fyne-io/fyne#4516 "Calling entry.SetPlaceHolder inside of OnChanged callback freezes app",
// fixed by PR fyne-io/fyne#4517 "Don't fire callback inside locks, fixes #4516".
//
// Select-all followed by Backspace reaches selectingKeyHandler, which write-locks the entry's
// propertyLock, erases the selection and updates Text, and then ran the user's OnChanged callback
// before unlocking. OnChanged is a func field set by the application; the one in the issue calls
// entry.SetPlaceHolder when the text became empty, and SetPlaceHolder write-locks propertyLock
// again, so the UI goroutine blocks on the lock it already holds and the app freezes. The fix
// (matching the v2.5 code) copies Text and OnChanged under the lock, unlocks, and only then calls
// the callback.
//
// This is the fixed version: OnChanged runs after propertyLock is released.
package main

import (
	"fmt"
	"sync"
)

type KeyName string

const (
	KeyBackspace KeyName = "BackSpace"
	KeyDelete    KeyName = "Delete"
)

type KeyEvent struct{ Name KeyName }

type ShortcutSelectAll struct{}

// RichText keeps the entry's text as runes (fyne's text provider).
type RichText struct{ runes []rune }

func (r *RichText) String() string { return string(r.runes) }
func (r *RichText) len() int       { return len(r.runes) }
func (r *RichText) deleteFromTo(lo, hi int) string {
	erased := string(r.runes[lo:hi])
	r.runes = append(r.runes[:lo], r.runes[hi:]...)
	return erased
}

type Entry struct {
	Text        string
	PlaceHolder string
	OnChanged   func(string) `json:"-"`

	propertyLock  sync.RWMutex
	CursorColumn  int
	selectColumn  int
	selecting     bool
	selectKeyDown bool
	provider      *RichText
	placeholder   *RichText
}

func NewEntry() *Entry {
	return &Entry{provider: &RichText{}, placeholder: &RichText{}}
}

func (e *Entry) textProvider() *RichText { return e.provider }

func (e *Entry) Refresh() {}

func (e *Entry) setFieldsAndRefresh(f func()) {
	e.propertyLock.Lock()
	f()
	e.propertyLock.Unlock()
	e.Refresh()
}

func (e *Entry) SetText(text string) {
	e.setFieldsAndRefresh(func() {
		e.provider.runes = []rune(text)
		e.updateText(text)
		e.CursorColumn = e.provider.len()
	})
}

func (e *Entry) SetPlaceHolder(text string) {
	e.propertyLock.Lock()
	e.PlaceHolder = text
	e.propertyLock.Unlock()
	e.placeholder.runes = []rune(text)
	e.Refresh()
}

func (e *Entry) updateText(text string) bool {
	changed := e.Text != text
	e.Text = text
	if e.Text == "" {
		e.CursorColumn = 0
	}
	return changed
}

func (e *Entry) selection() (int, int) {
	if e.selectColumn < e.CursorColumn {
		return e.selectColumn, e.CursorColumn
	}
	return e.CursorColumn, e.selectColumn
}

func (e *Entry) eraseSelection() bool {
	posA, posB := e.selection()
	if posA == posB {
		return false
	}
	e.textProvider().deleteFromTo(posA, posB)
	e.CursorColumn, e.selectColumn = posA, posA
	e.selecting = false
	return true
}

func (e *Entry) eraseSelectionAndUpdate() {
	if e.eraseSelection() {
		e.updateText(e.textProvider().String())
	}
}

func (e *Entry) selectAll() {
	if e.textProvider().len() == 0 {
		return
	}
	e.setFieldsAndRefresh(func() {
		e.selectColumn = 0
		e.CursorColumn = e.textProvider().len()
		e.selecting = true
	})
}

func (e *Entry) TypedShortcut(s any) {
	if _, ok := s.(*ShortcutSelectAll); ok {
		e.selectAll()
	}
}

func (e *Entry) selectingKeyHandler(key *KeyEvent) bool {
	if !e.selecting {
		return false
	}
	switch key.Name {
	case KeyBackspace, KeyDelete:
		e.propertyLock.Lock()
		e.eraseSelectionAndUpdate()
		content := e.Text
		cb := e.OnChanged
		e.propertyLock.Unlock()

		if cb != nil {
			cb(content)
		}
		e.Refresh()
		return true
	}
	return false
}

func (e *Entry) TypedKey(key *KeyEvent) {
	if e.selectKeyDown || e.selecting {
		if e.selectingKeyHandler(key) {
			return
		}
	}
	fmt.Println("plain key", key.Name)
}

func main() {
	str := "hello"
	entry := NewEntry()
	entry.SetText(str)
	entry.OnChanged = func(s string) {
		if entry.Text == "" {
			entry.SetPlaceHolder("bye")
		} else {
			str = s
		}
	}
	// The user presses Ctrl+A and then Backspace in the window.
	entry.TypedShortcut(&ShortcutSelectAll{})
	entry.TypedKey(&KeyEvent{Name: KeyBackspace})
	fmt.Printf("text=%q placeholder=%q last=%q\n", entry.Text, entry.PlaceHolder, str)
}
