// Project: gohugoio/hugo (tpl/tplimpl/template.go, v0.69)
// Bug:     PR #7195 "tpl/tmplimpl/template: Change defer RLock to RUnlock".
//
// A templateNamespace created with lock=true carries a *sync.RWMutex in its
// embedded templateStateMap. templateNamespace.Lookup read-locks it but defers
// a second RLock instead of RUnlock, so every lookup leaks two read locks.
// Executing the looked-up template (templateExec.Execute via the RLocker
// wrapper) still works, but the next writer - templateNamespace.parse, reached
// from templateHandler.AddTemplate when a template is (re)added - blocks in
// Lock() forever, and with it every later RLock on the namespace.
// Deadlocking acquisition: t.mu.Lock() in templateNamespace.parse.
package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"text/template"
)

// tpl.Template
type Template interface {
	Name() string
	Execute(wr io.Writer, data interface{}) error
}

// common/types.RLocker
type RLocker interface {
	RLock()
	RUnlock()
}

type templateInfo struct{ name, template string }

type templateState struct {
	Template
	info templateInfo
}

type templateStateMap struct {
	mu        *sync.RWMutex // May be nil
	templates map[string]*templateState
}

type templateWrapperWithLock struct {
	*sync.RWMutex
	Template
}

type templateNamespace struct {
	prototypeText *template.Template
	*templateStateMap
}

func newTemplateNamespace(funcs template.FuncMap, lock bool) *templateNamespace {
	var mu *sync.RWMutex
	if lock {
		mu = &sync.RWMutex{}
	}
	return &templateNamespace{
		prototypeText:    template.New("").Funcs(funcs),
		templateStateMap: &templateStateMap{mu: mu, templates: make(map[string]*templateState)},
	}
}

func (t *templateNamespace) Lookup(name string) (Template, bool) {
	if t.mu != nil {
		t.mu.RLock()
		defer t.mu.RLock()
	}
	templ, found := t.templates[name]
	if !found {
		return nil, false
	}
	if t.mu != nil {
		return &templateWrapperWithLock{RWMutex: t.mu, Template: templ}, true
	}
	return templ, found
}

func (t *templateNamespace) parse(info templateInfo) (*templateState, error) {
	if t.mu != nil {
		t.mu.Lock() // waits forever for the read locks leaked by Lookup
		defer t.mu.Unlock()
	}
	templ, err := t.prototypeText.New(info.name).Parse(info.template)
	if err != nil {
		return nil, err
	}
	ts := &templateState{Template: templ, info: info}
	t.templates[info.name] = ts
	return ts, nil
}

type templateHandler struct{ main *templateNamespace }

func (t *templateHandler) AddTemplate(name, tpl string) error {
	_, err := t.main.parse(templateInfo{name: name, template: tpl})
	return err
}

func (t *templateHandler) Lookup(name string) (Template, bool) { return t.main.Lookup(name) }

type templateExec struct{ *templateHandler }

func (t *templateExec) Execute(templ Template, wr io.Writer, data interface{}) error {
	if rlocker, ok := templ.(RLocker); ok {
		rlocker.RLock()
		defer rlocker.RUnlock()
	}
	return templ.Execute(wr, data)
}

func main() {
	funcs := template.FuncMap{"upper": func(s string) string { return s }}
	e := &templateExec{&templateHandler{main: newTemplateNamespace(funcs, true)}}
	if err := e.AddTemplate("partials/header.html", "<h1>{{ .Title | upper }}</h1>\n"); err != nil {
		panic(err)
	}

	// Render a page.
	if templ, found := e.Lookup("partials/header.html"); found {
		_ = e.Execute(templ, os.Stdout, map[string]string{"Title": "Hello"})
	}

	// hugo server: a layout file changed, re-add it.
	err := e.AddTemplate("partials/footer.html", "<footer>{{ .Title }}</footer>\n")
	fmt.Println("template added:", err)
}
