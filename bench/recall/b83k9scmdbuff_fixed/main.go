// Project: derailed/k9s (internal/model/cmd_buff.go CmdBuff.SetActive, internal/ui/prompt.go Prompt.BufferActive), v0.2x, 2020-2021 (approximate).
// Bug: CmdBuff.SetActive held c.mx (write lock, released by defer) while firing BufferActive to its watchers; the
// Prompt watcher's activate() reads the model back through GetText/GetSuggestion, which RLock the same mutex, so
// pressing ':' to enter command mode froze the UI goroutine. The fix updates the state inside a
// c.mx.Lock() { ... } c.mx.Unlock() block and fires the listeners after the lock is released.
package main

import (
	"context"
	"fmt"
	"sync"
)

// ---- internal/model/cmd_buff.go ----

type BufferKind int8

const (
	CommandBuffer BufferKind = 1 << iota
	FilterBuffer
)

// BuffWatcher represents a command buffer listener.
type BuffWatcher interface {
	BufferCompleted(text, suggestion string)
	BufferChanged(text, suggestion string)
	BufferActive(state bool, kind BufferKind)
}

// CmdBuff represents user command input.
type CmdBuff struct {
	buff       []rune
	suggestion string
	listeners  map[BuffWatcher]struct{}
	hotKey     rune
	kind       BufferKind
	active     bool
	cancel     context.CancelFunc
	mx         sync.RWMutex
}

func NewCmdBuff(key rune, kind BufferKind) *CmdBuff {
	return &CmdBuff{hotKey: key, kind: kind, buff: make([]rune, 0, 10), listeners: make(map[BuffWatcher]struct{})}
}

func (c *CmdBuff) IsActive() bool { c.mx.RLock(); defer c.mx.RUnlock(); return c.active }

// SetActive toggles cmd buffer active state.
func (c *CmdBuff) SetActive(b bool) {
	c.mx.Lock()
	{
		c.active = b
	}
	c.mx.Unlock()
	c.fireActive(b)
}

func (c *CmdBuff) GetText() string       { c.mx.RLock(); defer c.mx.RUnlock(); return string(c.buff) }
func (c *CmdBuff) GetSuggestion() string { c.mx.RLock(); defer c.mx.RUnlock(); return c.suggestion }
func (c *CmdBuff) GetKind() BufferKind   { return c.kind }

// ClearText clears out command buffer.
func (c *CmdBuff) ClearText(fire bool) {
	c.mx.Lock()
	{
		c.buff, c.suggestion = c.buff[:0], ""
	}
	c.mx.Unlock()
	if fire {
		c.fireBufferCompleted(c.GetText(), c.GetSuggestion())
	}
}

// Notify notifies all listener of current suggestions.
func (c *CmdBuff) Notify(delete bool) {
	c.fireBufferChanged(c.GetText(), c.GetSuggestion())
}

func (c *CmdBuff) AddListener(w BuffWatcher)    { c.mx.Lock(); c.listeners[w] = struct{}{}; c.mx.Unlock() }
func (c *CmdBuff) RemoveListener(l BuffWatcher) { c.mx.Lock(); delete(c.listeners, l); c.mx.Unlock() }

func (c *CmdBuff) fireBufferCompleted(t, s string) {
	for l := range c.listeners {
		l.BufferCompleted(t, s)
	}
}
func (c *CmdBuff) fireBufferChanged(t, s string) {
	for l := range c.listeners {
		l.BufferChanged(t, s)
	}
}
func (c *CmdBuff) fireActive(b bool) {
	for l := range c.listeners {
		l.BufferActive(b, c.GetKind())
	}
}

// ---- internal/model/fish_buff.go ----

type SuggestionFunc func(text string) []string

type FishBuff struct {
	*CmdBuff
	suggestionFn       SuggestionFunc
	suggestions        []string
	selectedSuggestion int
}

func NewFishBuff(key rune, kind BufferKind) *FishBuff {
	return &FishBuff{CmdBuff: NewCmdBuff(key, kind), selectedSuggestion: -1}
}

// ---- internal/ui/prompt.go ----

type PromptModel interface {
	SetActive(bool)
	ClearText(fire bool)
	GetText() string
	GetSuggestion() string
	Notify(delete bool)
	AddListener(BuffWatcher)
	RemoveListener(BuffWatcher)
}

type Prompt struct {
	model  PromptModel
	icon   rune
	text   string
	cursor int
	border bool
}

func (p *Prompt) SetModel(m PromptModel) {
	if p.model != nil {
		p.model.RemoveListener(p)
	}
	p.model = m
	p.model.AddListener(p)
}

func (p *Prompt) Clear()                               { p.text = "" }
func (p *Prompt) write(text, suggest string)           { p.text = fmt.Sprintf("%c> %s%s", p.icon, text, suggest) }
func (p *Prompt) BufferCompleted(text, suggest string) { p.write(text, suggest) }
func (p *Prompt) BufferChanged(text, suggest string)   { p.write(text, suggest) }

func (p *Prompt) BufferActive(activate bool, kind BufferKind) {
	if activate {
		p.border = true
		p.icon = map[BufferKind]rune{CommandBuffer: '🐶', FilterBuffer: '🐩'}[kind]
		p.activate()
		return
	}
	p.border = false
	p.Clear()
}

func (p *Prompt) activate() {
	p.Clear()
	p.cursor = len(p.model.GetText())
	p.write(p.model.GetText(), p.model.GetSuggestion())
	p.model.Notify(false)
}

// ---- internal/ui/app.go ----

type App struct {
	prompt   *Prompt
	cmdModel *FishBuff
	focus    interface{}
}

// ResetPrompt reset the prompt model and marks buffer as active.
func (a *App) ResetPrompt(m PromptModel) {
	m.ClearText(true)
	a.prompt.SetModel(m)
	a.focus = a.prompt
	m.SetActive(true)
}

func (a *App) activateCmd() { a.ResetPrompt(a.cmdModel) }

func main() {
	a := &App{prompt: &Prompt{}, cmdModel: NewFishBuff(':', CommandBuffer)}
	a.activateCmd() // user presses ':'
	fmt.Println("prompt:", a.prompt.text, "active:", a.cmdModel.IsActive())
}
