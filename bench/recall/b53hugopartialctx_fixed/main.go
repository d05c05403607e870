// Fixed twin (the 0.93.1 rollback: no lock held while the partial executes).
// Project: gohugoio/hugo v0.93.0.
// Files: tpl/partials/partials.go (Namespace.IncludeCached, Namespace.getOrCreate, Namespace.include),
// tpl/tplimpl (templateHandler.Lookup, templateHandler.ExecuteWithContext), hugolib/page__per_output.go
// (pageContentOutput.Content rendering the page content and its shortcodes), hugolib/shortcode.go.
// Issue: gohugoio/hugo#9588 "partialCached regression from 0.92.2 to 0.93.0" (the same regression
// first seen on master as #9519).
// Fix: gohugoio/hugo#9592 "tpl/partials: Fix partialCached deadlock regression" (v0.93.1, a rollback
// of commit 0927cf73).
//
// Hugo 0.93.0 changed partialCached so that the partial is executed while the partial cache's write
// lock is held, so each name/variant is rendered only once. To let a cached partial call another
// cached partial, the lock holder was recorded in the context.Context that template execution
// carries, and a nested partialCached that found the marker in its context skipped the lock. But the
// context was only plumbed part of the way: when a partial renders .Content, the page content and its
// shortcodes are rendered with a fresh context. A partialCached call inside a shortcode therefore
// does not see the marker and locks the cache that the outer partialCached, higher up the same
// goroutine, still holds. As bep put it: single.html => partialCached => Content => shortcode =>
// partialCached. The fix rolled the locking back: look the key up under the read lock, execute the
// partial without any lock, and store the result under the write lock with a double check.
package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

type partialCacheKey struct {
	name    string
	variant interface{}
}

// partialCache represents a cache of partials protected by a mutex.
type partialCache struct {
	sync.RWMutex
	p map[partialCacheKey]interface{}
}

// Template is what tpl.Template offers to the partials namespace.
type Template interface {
	Name() string
	Execute(ctx context.Context, w *strings.Builder, data interface{}) error
}

type funcTemplate struct {
	name string
	exec func(ctx context.Context, w *strings.Builder, data interface{}) error
}

func (t *funcTemplate) Name() string { return t.name }
func (t *funcTemplate) Execute(ctx context.Context, w *strings.Builder, data interface{}) error {
	return t.exec(ctx, w, data)
}

type templateHandler struct {
	templates map[string]Template
}

func (t *templateHandler) Lookup(name string) (Template, bool) {
	templ, ok := t.templates[name]
	return templ, ok
}

func (t *templateHandler) ExecuteWithContext(ctx context.Context, templ Template, w *strings.Builder, data interface{}) error {
	return templ.Execute(ctx, w, data)
}

type Deps struct{ tmpl *templateHandler }

func (d *Deps) Tmpl() *templateHandler { return d.tmpl }

// Namespace provides template functions for the "partials" namespace.
type Namespace struct {
	deps           *Deps
	cachedPartials *partialCache
}

func (ns *Namespace) IncludeCached(ctx context.Context, name string, data interface{}, variants ...interface{}) (interface{}, error) {
	key := partialCacheKey{name: name}
	if len(variants) > 0 {
		key.variant = fmt.Sprint(variants...)
	}
	return ns.getOrCreate(ctx, key, data)
}

func (ns *Namespace) getOrCreate(ctx context.Context, key partialCacheKey, dot interface{}) (interface{}, error) {
	ns.cachedPartials.RLock()
	p, ok := ns.cachedPartials.p[key]
	ns.cachedPartials.RUnlock()
	if ok {
		return p, nil
	}

	p, err := ns.include(ctx, key.name, dot)
	if err != nil {
		return nil, err
	}

	ns.cachedPartials.Lock()
	defer ns.cachedPartials.Unlock()
	// Double-check.
	if p2, ok := ns.cachedPartials.p[key]; ok {
		return p2, nil
	}
	ns.cachedPartials.p[key] = p
	return p, nil
}

func (ns *Namespace) include(ctx context.Context, name string, data interface{}) (interface{}, error) {
	templ, found := ns.deps.Tmpl().Lookup("partials/" + name)
	if !found {
		return "", fmt.Errorf("partial %q not found", name)
	}
	var b strings.Builder
	if err := ns.deps.Tmpl().ExecuteWithContext(ctx, templ, &b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Page is a content page; its content holds shortcodes.
type Page struct {
	title      string
	shortcodes []string
	sc         *shortcodeHandler
}

// Content renders the page content. It takes no context: the context stops here.
func (p *Page) Content() (string, error) {
	return p.sc.renderShortcodes(context.Background(), p)
}

type shortcodeHandler struct{ tmpl *templateHandler }

func (s *shortcodeHandler) renderShortcodes(ctx context.Context, p *Page) (string, error) {
	var b strings.Builder
	b.WriteString("<p>" + p.title + "</p>")
	for _, name := range p.shortcodes {
		templ, ok := s.tmpl.Lookup("shortcodes/" + name)
		if !ok {
			return "", fmt.Errorf("shortcode %q not found", name)
		}
		if err := s.tmpl.ExecuteWithContext(ctx, templ, &b, p); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func main() {
	tmpl := &templateHandler{templates: map[string]Template{}}
	deps := &Deps{tmpl: tmpl}
	ns := &Namespace{deps: deps, cachedPartials: &partialCache{p: map[partialCacheKey]interface{}{}}}
	sc := &shortcodeHandler{tmpl: tmpl}
	docs := &Page{title: "Docs", shortcodes: []string{"icon"}, sc: sc}

	// layouts/shortcodes/icon.html: {{ partialCached "icon.html" "book" "book" }}
	tmpl.templates["shortcodes/icon"] = &funcTemplate{name: "icon", exec: func(ctx context.Context, w *strings.Builder, data interface{}) error {
		v, err := ns.IncludeCached(ctx, "icon.html", "book", "book")
		w.WriteString(fmt.Sprint(v))
		return err
	}}
	// layouts/partials/icon.html
	tmpl.templates["partials/icon.html"] = &funcTemplate{name: "icon.html", exec: func(ctx context.Context, w *strings.Builder, data interface{}) error {
		w.WriteString("<svg>" + fmt.Sprint(data) + "</svg>")
		return nil
	}}
	// layouts/partials/menu.html: {{ range .Sections }}{{ .Content }}{{ end }}
	tmpl.templates["partials/menu.html"] = &funcTemplate{name: "menu.html", exec: func(ctx context.Context, w *strings.Builder, data interface{}) error {
		for _, section := range data.([]*Page) {
			c, err := section.Content()
			if err != nil {
				return err
			}
			w.WriteString("<li>" + c + "</li>")
		}
		return nil
	}}
	// layouts/_default/single.html: {{ partialCached "menu.html" .Site.Sections "main" }}
	single := &funcTemplate{name: "single.html", exec: func(ctx context.Context, w *strings.Builder, data interface{}) error {
		v, err := ns.IncludeCached(ctx, "menu.html", []*Page{docs}, "main")
		w.WriteString(fmt.Sprint(v))
		return err
	}}

	var out strings.Builder
	if err := tmpl.ExecuteWithContext(context.Background(), single, &out, nil); err != nil {
		fmt.Println("render error:", err)
		return
	}
	fmt.Println(out.String())
}
