// Command b70hugopartialcached reproduces the Hugo partialCached deadlock
// reported in gohugoio/hugo#2935 and fixed by gohugoio/hugo#2945 ("tpl: Fix
// deadlock in cached partials": cached partials that contained cached
// partials would create a deadlock).
//
// Template functions are resolved by name from the funcster's func map
// while a template executes. partialCached goes to partialCache.Get, which
// misses the cache, takes the cache's write lock and renders the partial
// while still holding it. The menu partial itself calls partialCached for
// an icon, so rendering it looks "partialCached" up in the func map and
// calls it again; the nested Get does cachedPartials.RLock, which cannot be
// granted while the same goroutine holds the write lock.
//
// The upstream fix drops the write lock while the partial is rendered and
// re-takes it only to store the result.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type HTML string

type node struct {
	text string
	fn   string
	args []string
}

type templ struct {
	name  string
	nodes []node
}

type partialCache struct {
	sync.RWMutex
	p map[string]HTML
}

type templateFuncster struct {
	funcMap        map[string]interface{}
	templates      map[string]*templ
	cachedPartials partialCache
	renders        int
}

func newTemplateFuncster() *templateFuncster {
	tf := &templateFuncster{
		templates:      map[string]*templ{},
		cachedPartials: partialCache{p: map[string]HTML{}},
	}
	tf.initFuncMap()
	return tf
}

func (tf *templateFuncster) initFuncMap() {
	tf.funcMap = map[string]interface{}{
		"partial":       tf.partial,
		"partialCached": tf.partialCached,
		"upper":         func(s string) HTML { return HTML(strings.ToUpper(s)) },
		"safeHTML":      func(s string) HTML { return HTML(s) },
	}
}

func (tf *templateFuncster) partial(name string, context interface{}) HTML {
	return tf.executeTemplate("partials/"+name, context)
}

func (tf *templateFuncster) partialCached(name string, context interface{}, variant ...string) HTML {
	key := name
	if len(variant) > 0 {
		key += strings.Join(variant, "")
	}
	return tf.cachedPartials.Get(tf, key, name, context)
}

// Get retrieves partial output from the cache based upon the partial name.
// If the partial is not found in the cache, the partial is rendered and
// added to the cache.
func (c *partialCache) Get(tf *templateFuncster, key, name string, context interface{}) (p HTML) {
	var ok bool

	c.RLock()
	p, ok = c.p[key]
	c.RUnlock()

	if ok {
		return p
	}

	c.Lock()
	if p, ok = c.p[key]; !ok {
		p = tf.partial(name, context)
		c.p[key] = p
	}
	c.Unlock()

	return p
}

func (tf *templateFuncster) executeTemplate(name string, context interface{}) HTML {
	t, ok := tf.templates[name]
	if !ok {
		return HTML(fmt.Sprintf("<!-- template %q not found -->", name))
	}
	tf.renders++
	var b strings.Builder
	for _, n := range t.nodes {
		if n.fn == "" {
			b.WriteString(n.text)
			continue
		}
		b.WriteString(string(tf.callFunc(n.fn, n.args, context)))
	}
	return HTML(b.String())
}

func (tf *templateFuncster) callFunc(name string, args []string, context interface{}) HTML {
	switch fn := tf.funcMap[name].(type) {
	case func(string, interface{}) HTML:
		return fn(args[0], context)
	case func(string, interface{}, ...string) HTML:
		return fn(args[0], context, args[1:]...)
	case func(string) HTML:
		return fn(args[0])
	default:
		return HTML(fmt.Sprintf("<!-- function %q not defined -->", name))
	}
}

func main() {
	tf := newTemplateFuncster()
	tf.templates["partials/icon.html"] = &templ{nodes: []node{
		{text: `<svg class="icon">`}, {fn: "upper", args: []string{"book"}}, {text: `</svg>`},
	}}
	tf.templates["partials/menu.html"] = &templ{nodes: []node{
		{text: "<ul><li>"},
		{fn: "partialCached", args: []string{"icon.html", "icon/book"}},
		{text: "<span>Book</span></li></ul>"},
	}}
	tf.templates["_default/single.html"] = &templ{nodes: []node{
		{text: "<div>"}, {fn: "partialCached", args: []string{"menu.html"}}, {text: "</div>"},
	}}
	for _, page := range []string{"/posts/first/", "/posts/second/"} {
		out := tf.executeTemplate("_default/single.html", page)
		fmt.Printf("%s => %s\n", page, out)
	}
	fmt.Printf("templates executed: %d\n", tf.renders)
}
