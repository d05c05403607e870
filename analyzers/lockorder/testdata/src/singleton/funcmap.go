package main

import (
	"strings"
	"sync"
)

// A template engine's func map (hugo's partialCached, gohugoio/hugo#2935):
// functions kept as interface values in a map, called after a type switch
// picks their type. The cache is a value field of the one funcster, so
// its lock is one lock: rendering a partial under the cache's lock, whose
// template calls partialCached again, locks it twice.

type partialCache struct {
	sync.RWMutex
	p map[string]string
}

type funcster struct {
	funcMap  map[string]interface{}
	cache    partialCache
	partials map[string][]string
}

func newFuncster() *funcster {
	f := &funcster{cache: partialCache{p: map[string]string{}}, partials: map[string][]string{}}
	f.funcMap = map[string]interface{}{
		"partialCached": f.partialCached,
		"upper":         strings.ToUpper,
	}
	return f
}

func (f *funcster) partialCached(name string, variant ...string) string {
	return f.cache.get(f, name+strings.Join(variant, ""), name)
}

func (c *partialCache) get(f *funcster, key, name string) string {
	c.RLock()
	p, ok := c.p[key]
	c.RUnlock()
	if ok {
		return p
	}
	c.Lock()
	defer c.Unlock()
	p = f.render(name) // want `partialCache.RWMutex locked again by funcster.render -> funcster.call -> funcster.partialCached -> partialCache.get \(at funcmap.go:\d+\), the same lock: the program makes one funcster, which holds the one partialCache \(at funcmap.go:\d+\), while held since funcmap.go:\d+: self-deadlock \[double-lock\]`
	c.p[key] = p
	return p
}

func (f *funcster) render(name string) string {
	var b strings.Builder
	for _, fn := range f.partials[name] {
		b.WriteString(f.call(fn, name))
	}
	return b.String()
}

func (f *funcster) call(name, arg string) string {
	switch fn := f.funcMap[name].(type) {
	case func(string, ...string) string:
		return fn(arg)
	case func(string) string:
		return fn(arg)
	}
	return ""
}

// The fixed cache renders outside its lock: silent.
func (c *partialCache) getFixed(f *funcster, key, name string) string {
	c.RLock()
	p, ok := c.p[key]
	c.RUnlock()
	if ok {
		return p
	}
	p = f.render(name)
	c.Lock()
	c.p[key] = p
	c.Unlock()
	return p
}

// Under the lock only the function of the other type runs: silent.
func (c *partialCache) upperLocked(f *funcster, s string) string {
	c.Lock()
	defer c.Unlock()
	if fn, ok := f.funcMap["upper"].(func(string) string); ok {
		return fn(s)
	}
	return s
}

func runFuncster() {
	f := newFuncster()
	f.partials["menu"] = []string{"partialCached"}
	_ = f.partialCached("menu")
	_ = f.cache.getFixed(f, "k", "menu")
	_ = f.cache.upperLocked(f, "x")
}
