// Project: hugo (tpl/tplimpl/template.go, tpl/tplimpl/template_funcs.go: templateNamespace / templateHandler lookup)
// Bug: templates are parsed lazily on first use. Lookup took the namespace RWMutex for
// reading and, when it found a template whose state was still "unparsed", called
// parseLazy, which takes the same mutex for writing to store the parsed tree and register
// nested "define" templates. Lock while holding RLock of the same RWMutex: any page render
// that hits a not-yet-parsed partial hangs forever.
// Upstream fix: release the read lock before parsing and re-check under the write lock
// (double-checked), later replaced by a per-template sync.Once. Exact PR not recalled;
// shape modelled faithfully.
package main

import (
	"fmt"
	"strings"
	"sync"
	"text/template"
)

type templateState struct {
	name   string
	source string
	parsed *template.Template
}

type templateNamespace struct {
	mu        sync.RWMutex
	templates map[string]*templateState
	prototype *template.Template
}

type templateHandler struct {
	main *templateNamespace
}

func newTemplateHandler() *templateHandler {
	return &templateHandler{main: &templateNamespace{
		templates: map[string]*templateState{},
		prototype: template.New("").Funcs(template.FuncMap{"upper": strings.ToUpper}),
	}}
}

// AddTemplate registers a template source; parsing is deferred.
func (t *templateNamespace) AddTemplate(name, src string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.templates[name] = &templateState{name: name, source: src}
}

func (t *templateNamespace) parseLazy(ts *templateState) (*template.Template, error) {
	t.mu.Lock() // DEADLOCK HERE
	defer t.mu.Unlock()
	if ts.parsed != nil {
		return ts.parsed, nil
	}
	clone, err := t.prototype.Clone()
	if err != nil {
		return nil, err
	}
	tmpl, err := clone.New(ts.name).Parse(ts.source)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", ts.name, err)
	}
	for _, nested := range tmpl.Templates() {
		if nested.Name() != ts.name && t.templates[nested.Name()] == nil {
			t.templates[nested.Name()] = &templateState{name: nested.Name(), parsed: nested}
		}
	}
	ts.parsed = tmpl
	return tmpl, nil
}

func (t *templateNamespace) Lookup(name string) (*template.Template, bool, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ts, found := t.templates[name]
	if !found {
		return nil, false, nil
	}
	if ts.parsed == nil {
		tmpl, err := t.parseLazy(ts)
		return tmpl, true, err
	}
	return ts.parsed, true, nil
}

func (h *templateHandler) Execute(name string, data any) (string, error) {
	tmpl, found, err := h.main.Lookup(name)
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("template %q not found", name)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

func main() {
	h := newTemplateHandler()
	h.main.AddTemplate("partials/header.html", `{{ define "title" }}{{ .Title | upper }}{{ end }}<h1>{{ template "title" . }}</h1>`)
	h.main.AddTemplate("_default/single.html", `<p>{{ .Content }}</p>`)
	pages := []map[string]string{{"Title": "hello", "Content": "a"}, {"Title": "world", "Content": "b"}}
	for _, p := range pages {
		for _, name := range []string{"partials/header.html", "_default/single.html"} {
			out, err := h.Execute(name, p)
			if err != nil {
				fmt.Println("render:", err)
				continue
			}
			fmt.Println(out)
		}
	}
}
