// Project: Hugo (tpl/template_funcs.go: partialCached and the partial cache Get, partial, funcMap; v0.18)
// Bug: On a cache miss Get takes the cache's write lock and renders the partial while holding it.
//      Rendering dispatches template functions through the funcMap; a partial that itself calls partialCached
//      re-enters Get on the same goroutine and blocks in RLock() behind its own write lock, so the page
//      render, and the site build waiting on it, never finishes.
// Upstream fix: gohugoio/hugo#2945 (fixes #2935) drops the write lock while executing the partial and re-takes it only to store the result.

package main

import (
	"fmt"
	"html/template"
	"strings"
	"sync"
)

type partialCache struct {
	sync.RWMutex
	p map[string]template.HTML
}

type partialFunc func(t *templateFuncster, ctx any) template.HTML

type templateFuncster struct {
	funcMap        map[string]func(args ...any) any
	partials       map[string]partialFunc
	cachedPartials partialCache
}

func (t *templateFuncster) partial(name string, ctx any) template.HTML {
	p, ok := t.partials["partials/"+name]
	if !ok {
		return template.HTML(fmt.Sprintf("<!-- partial %q not found -->", name))
	}
	return p(t, ctx)
}

func (t *templateFuncster) Get(key, name string, context any) (p template.HTML) {
	var ok bool

	t.cachedPartials.RLock() // DEADLOCK HERE
	p, ok = t.cachedPartials.p[key]
	t.cachedPartials.RUnlock()

	if ok {
		return p
	}

	t.cachedPartials.Lock()
	if p, ok = t.cachedPartials.p[key]; !ok {
		p = t.partial(name, context)
		t.cachedPartials.p[key] = p
	}
	t.cachedPartials.Unlock()

	return p
}

func (t *templateFuncster) partialCached(name string, context any, variant ...string) template.HTML {
	key := name
	if len(variant) > 0 {
		key += strings.Join(variant, "")
	}
	return t.Get(key, name, context)
}

func (t *templateFuncster) initFuncMap() {
	t.funcMap = map[string]func(args ...any) any{
		"partial": func(args ...any) any { return t.partial(args[0].(string), args[1]) },
		"partialCached": func(args ...any) any {
			var variants []string
			for _, v := range args[2:] {
				variants = append(variants, v.(string))
			}
			return t.partialCached(args[0].(string), args[1], variants...)
		},
	}
}

func main() {
	t := &templateFuncster{cachedPartials: partialCache{p: map[string]template.HTML{}}}
	t.initFuncMap()
	t.partials = map[string]partialFunc{
		"partials/icon.html": func(t *templateFuncster, ctx any) template.HTML {
			return template.HTML(fmt.Sprintf(`<svg class="icon"><use href="#%v"></use></svg>`, ctx))
		},
		// {{ partialCached "icon.html" "icon/book" "icon/book" }} inside a cached menu partial
		"partials/menu.html": func(t *templateFuncster, ctx any) template.HTML {
			icon := t.funcMap["partialCached"]("icon.html", "icon/book", "icon/book").(template.HTML)
			return "<ul><li>" + icon + "<span>Book</span></li></ul>"
		},
	}
	// layouts/_default/single.html: {{ partialCached "menu.html" . }}
	page := map[string]string{"Title": "Getting started"}
	out := t.funcMap["partialCached"]("menu.html", page).(template.HTML)
	fmt.Println(out)
}
