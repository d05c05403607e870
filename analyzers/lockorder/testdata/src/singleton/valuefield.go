package main

import "sync"

// A lock in a struct held by value in one field of a struct the program
// makes once is one lock: the recursion back into the holder's field
// locks it twice. Held by value also in a slice, the type has many
// objects, and the same recursion is two objects' (nothing reported).

type renderCache struct {
	sync.Mutex
	pages map[string]string
}

type site struct {
	cache renderCache
	depth int
}

func (c *renderCache) page(s *site, path string) string {
	c.Lock()
	defer c.Unlock()
	if s.depth > 0 {
		s.depth--
		return s.render(path) // want `renderCache.Mutex locked again by site.render -> renderCache.page \(at valuefield.go:\d+\), the same lock: the program makes one site, which holds the one renderCache \(at valuefield.go:\d+\), while held since valuefield.go:\d+: self-deadlock \[double-lock\]`
	}
	return c.pages[path]
}

func (s *site) render(path string) string { return s.cache.page(s, path+"/") }

type bucket struct {
	sync.Mutex
	keys map[string]int
}

type table struct {
	first   bucket
	buckets []bucket
	depth   int
}

func (sh *bucket) visit(r *table, k string) int {
	sh.Lock()
	defer sh.Unlock()
	if r.depth > 0 {
		r.depth--
		return r.next(k)
	}
	return sh.keys[k]
}

func (r *table) next(k string) int { return r.first.visit(r, k) }

func runSite() {
	s := &site{cache: renderCache{pages: map[string]string{}}, depth: 1}
	_ = s.cache.page(s, "/")
	r := &table{buckets: make([]bucket, 2), depth: 1}
	_ = r.buckets[0].visit(r, "a")
}

// A package var of the type is an object of its own besides the holder's
// field: the same recursion is two objects' (nothing reported).
type draftCache struct {
	sync.Mutex
	drafts map[string]string
}

type editor struct {
	drafts draftCache
	depth  int
}

var spareDrafts draftCache

func (c *draftCache) draft(e *editor, path string) string {
	c.Lock()
	defer c.Unlock()
	if e.depth > 0 {
		e.depth--
		return e.render(path)
	}
	return c.drafts[path]
}

func (e *editor) render(path string) string { return e.drafts.draft(e, path+"/") }

func runEditor() {
	e := &editor{drafts: draftCache{drafts: map[string]string{}}, depth: 1}
	_ = e.drafts.draft(e, "/")
	_ = spareDrafts.draft(e, "/")
}
