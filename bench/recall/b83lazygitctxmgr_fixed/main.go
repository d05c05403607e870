// Project: jesseduffield/lazygit (pkg/gui/context.go ContextMgr.replaceContext / activateContext), 2022-2023 (approximate).
// Bug: replaceContext locked the ContextMgr's embedded RWMutex and released it only with a deferred Unlock, so
// activateContext, and through HandleFocus the context's OnFocus callback, ran with the write lock held; the OnFocus
// of the commits panel asks gui.currentSideContext(), which RLocks the same ContextMgr, and the UI goroutine hangs.
// The fix unlocks the stack before activating the new context (as pushContext already did via pushToContextStack).
package main

import (
	"fmt"
	"sync"
)

// ---- pkg/gui/types ----

type ContextKey string
type ContextKind int

const (
	SIDE_CONTEXT ContextKind = iota
	MAIN_CONTEXT
	TEMPORARY_POPUP
)

type OnFocusOpts struct {
	ClickedViewName    string
	ClickedViewLineIdx int
}

type Context interface {
	GetKey() ContextKey
	GetKind() ContextKind
	GetViewName() string
	IsFocusable() bool
	HandleFocus(opts OnFocusOpts) error
}

// ---- pkg/gui/context/base_context.go + simple_context.go ----

type BaseContext struct {
	key       ContextKey
	kind      ContextKind
	viewName  string
	focusable bool
}

func (self *BaseContext) GetKey() ContextKey   { return self.key }
func (self *BaseContext) GetKind() ContextKind { return self.kind }
func (self *BaseContext) GetViewName() string  { return self.viewName }
func (self *BaseContext) IsFocusable() bool    { return self.focusable }

type SimpleContext struct {
	*BaseContext
	onFocusFn func(opts OnFocusOpts) error
}

func (self *SimpleContext) HandleFocus(opts OnFocusOpts) error {
	if self.onFocusFn != nil {
		return self.onFocusFn(opts)
	}
	return nil
}

// ---- pkg/gui/context.go ----

type ContextMgr struct {
	ContextStack []Context
	sync.RWMutex
	gui *Gui
}

func (self *ContextMgr) replaceContext(c Context) error {
	if !c.IsFocusable() {
		return nil
	}

	self.Lock()

	if len(self.ContextStack) == 0 {
		self.ContextStack = []Context{c}
	} else {
		// replace the last item with the given item
		self.ContextStack = append(self.ContextStack[0:len(self.ContextStack)-1], c)
	}

	self.Unlock()

	return self.activateContext(c, OnFocusOpts{})
}

func (self *ContextMgr) activateContext(c Context, opts OnFocusOpts) error {
	viewName := c.GetViewName()
	self.gui.setWindowContext(c)
	self.gui.currentView = viewName
	return c.HandleFocus(opts)
}

func (self *ContextMgr) currentSideContext() Context {
	self.RLock()
	defer self.RUnlock()

	stack := self.ContextStack
	// find the first context in the stack with the type of SIDE_CONTEXT
	for i := range stack {
		context := stack[len(stack)-1-i]
		if context.GetKind() == SIDE_CONTEXT {
			return context
		}
	}
	return self.gui.defaultSideContext()
}

// ---- pkg/gui/gui.go ----

type ContextTree struct {
	Files        *SimpleContext
	LocalCommits *SimpleContext
}

type Gui struct {
	contextMgr    *ContextMgr
	contexts      ContextTree
	windowContext map[string]ContextKey
	currentView   string
	mainTitle     string
}

func (gui *Gui) setWindowContext(c Context)    { gui.windowContext[c.GetViewName()] = c.GetKey() }
func (gui *Gui) defaultSideContext() Context   { return gui.contexts.Files }
func (gui *Gui) currentSideContext() Context   { return gui.contextMgr.currentSideContext() }
func (gui *Gui) refreshMainViews(title string) { gui.mainTitle = title }

func (gui *Gui) onCommitFocus(opts OnFocusOpts) error {
	// render the patch of the selected commit in the main view, titled after the side panel
	side := gui.currentSideContext()
	gui.refreshMainViews(string(side.GetKey()) + ": patch")
	return nil
}

func main() {
	gui := &Gui{windowContext: map[string]ContextKey{}}
	gui.contextMgr = &ContextMgr{gui: gui}
	gui.contexts = ContextTree{
		Files: &SimpleContext{BaseContext: &BaseContext{key: "files", kind: SIDE_CONTEXT, viewName: "files", focusable: true}},
		LocalCommits: &SimpleContext{
			BaseContext: &BaseContext{key: "commits", kind: SIDE_CONTEXT, viewName: "commits", focusable: true},
			onFocusFn:   gui.onCommitFocus,
		},
	}
	gui.contextMgr.ContextStack = []Context{gui.contexts.Files}

	// user presses '4' to jump to the commits panel
	if err := gui.contextMgr.replaceContext(gui.contexts.LocalCommits); err != nil {
		panic(err)
	}
	fmt.Println("main view:", gui.mainTitle)
}
