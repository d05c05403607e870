// Project: gohugoio/hugo (tpl/partials/partials.go Namespace.IncludeCached, getOrCreate, include), 0.93.0-DEV at commit 0927cf73, February 2022 (issue #9519, fixed by PR #9520; lock shape approximate).
// Bug: commit 0927cf73 made getOrCreate hold the partials cache write lock (partialCache embeds a sync.RWMutex) while it executed the partial, so a cached partial that itself calls partialCached, e.g. menu.html calling partialCached "icon.html", re-entered getOrCreate and blocked on the cache's RLock held by its own goroutine. The fix threads a context.Context through template execution and marks that the lock is already held, so nested cached partials reuse it instead of locking again.
package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

type partialCacheKey struct {
	name    string
	variant any
}

type partialCacheEntry struct {
	templateIdentity string
	v                any
}

// partialCache represents a cache of partials protected by a mutex.
type partialCache struct {
	sync.RWMutex
	p map[partialCacheKey]partialCacheEntry
}

// Template is a parsed partial; Exec stands in for text/template execution
// and may call template funcs such as partialCached.
type Template struct {
	Name string
	Exec func(ctx context.Context, ns *Namespace, data any) (string, error)
}

// TemplateHandler is the lookup/execute part of tpl.TemplateHandler.
type TemplateHandler interface {
	Lookup(name string) (*Template, bool)
	ExecuteWithContext(ctx context.Context, t *Template, data any) (string, error)
}

type templateHandler struct{ templates map[string]*Template }

func (h *templateHandler) Lookup(name string) (*Template, bool) {
	t, ok := h.templates[name]
	return t, ok
}

func (h *templateHandler) ExecuteWithContext(ctx context.Context, t *Template, data any) (string, error) {
	return t.Exec(ctx, nsFromCtx(ctx), data)
}

type Deps struct{ tmpl TemplateHandler }

func (d *Deps) Tmpl() TemplateHandler { return d.tmpl }

// Namespace provides template functions for the "partials" namespace.
type Namespace struct {
	deps           *Deps
	cachedPartials *partialCache
}

type nsKey struct{}

func nsFromCtx(ctx context.Context) *Namespace { return ctx.Value(nsKey{}).(*Namespace) }

func (ns *Namespace) include(ctx context.Context, name string, data any) (any, string, error) {
	name = strings.TrimPrefix(name, "partials/")
	templ, found := ns.deps.Tmpl().Lookup("partials/" + name)
	if !found {
		return "", "", fmt.Errorf("partial %q not found", name)
	}
	s, err := ns.deps.Tmpl().ExecuteWithContext(ctx, templ, data)
	return s, templ.Name, err
}

// IncludeCached executes and caches partial templates.
func (ns *Namespace) IncludeCached(ctx context.Context, name string, data any, variants ...any) (any, error) {
	key := partialCacheKey{name: name}
	if len(variants) > 0 {
		key.variant = fmt.Sprint(variants...)
	}
	pe, err := ns.getOrCreate(ctx, key, data)
	return pe.v, err
}

// partialsLockKey marks a context whose call chain already holds the
// partials cache lock (PR #9520 threads ctx through template execution).
type partialsLockKey struct{}

func (ns *Namespace) getOrCreate(ctx context.Context, key partialCacheKey, dot any) (partialCacheEntry, error) {
	if ctx.Value(partialsLockKey{}) != nil {
		// A cached partial up the stack holds the lock.
		return ns.getOrCreateLocked(ctx, key, dot)
	}
	ns.cachedPartials.RLock()
	p, ok := ns.cachedPartials.p[key]
	ns.cachedPartials.RUnlock()
	if ok {
		return p, nil
	}

	// 0927cf73: lock while the partial is rendered so every partial is only
	// executed once, even when many pages ask for it at the same time.
	ns.cachedPartials.Lock()
	defer ns.cachedPartials.Unlock()
	return ns.getOrCreateLocked(context.WithValue(ctx, partialsLockKey{}, true), key, dot)
}

func (ns *Namespace) getOrCreateLocked(ctx context.Context, key partialCacheKey, dot any) (partialCacheEntry, error) {
	// Double-check.
	if p2, ok := ns.cachedPartials.p[key]; ok {
		return p2, nil
	}

	v, id, err := ns.include(ctx, key.name, dot)
	if err != nil {
		return partialCacheEntry{}, err
	}
	pe := partialCacheEntry{templateIdentity: id, v: v}
	ns.cachedPartials.p[key] = pe
	return pe, nil
}

func main() {
	h := &templateHandler{templates: map[string]*Template{}}
	// layouts/partials/icon.html: {{ $icon := resources.Get (print . ".svg") }}...
	h.templates["partials/icon.html"] = &Template{Name: "partials/icon.html", Exec: func(ctx context.Context, ns *Namespace, data any) (string, error) {
		return "<svg id=\"" + fmt.Sprint(data) + "\"/>", nil
	}}
	// layouts/partials/menu.html: <li>{{ partialCached "icon.html" "icon/book" "icon/book" }}<span>Book</span></li>
	h.templates["partials/menu.html"] = &Template{Name: "partials/menu.html", Exec: func(ctx context.Context, ns *Namespace, data any) (string, error) {
		icon, err := ns.IncludeCached(ctx, "icon.html", "icon/book", "icon/book")
		if err != nil {
			return "", err
		}
		return "<ul><li>" + fmt.Sprint(icon) + "<span>Book</span></li></ul>", nil
	}}

	ns := &Namespace{deps: &Deps{tmpl: h}, cachedPartials: &partialCache{p: map[partialCacheKey]partialCacheEntry{}}}
	ctx := context.WithValue(context.Background(), nsKey{}, ns)

	// layouts/_default/single.html: <div>{{ partialCached "menu.html" . }}</div>
	for _, page := range []string{"/posts/a/", "/posts/b/"} {
		menu, err := ns.IncludeCached(ctx, "menu.html", page)
		if err != nil {
			panic(err)
		}
		fmt.Println(page, "=>", menu)
	}
}
