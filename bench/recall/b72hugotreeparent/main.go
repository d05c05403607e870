// Command b72hugotreeparent models Hugo's content map (hugolib/content_map.go
// and content_map_page.go): pages live in a content tree, each content node
// keeps a back-pointer to the tree it was inserted into, and the site renders
// a section by walking the tree below the section key.
//
// Modelled on hugo, no specific upstream bug. contentTree.WalkBelow holds the
// tree's read lock while it calls the walk func. Rendering a page asks for its
// CurrentSection, which goes through the node's back-pointer to the same tree
// and calls longestPrefix, taking the read lock a second time. In server mode
// the file watcher inserts a newly created page in between: its Lock waits for
// the walk's read lock, and because a writer is now queued, the renderer's
// nested RLock waits for the writer. The renderer and the watcher both stay
// blocked on the tree's RWMutex.
//
// The fixed twin collects the pages under the walk and renders them after
// WalkBelow has released the read lock.
package main

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

type pageState struct {
	title    string
	kind     string
	n        *contentNode
	rendered string
}

type contentNode struct {
	p    *pageState
	key  string
	tree *contentTree
}

type contentTree struct {
	Name  string
	mu    sync.RWMutex
	nodes map[string]*contentNode
}

func newContentTree(name string) *contentTree {
	return &contentTree{Name: name, nodes: map[string]*contentNode{}}
}

func (t *contentTree) Insert(key string, n *contentNode) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n.key = key
	n.tree = t
	n.p.n = n
	t.nodes[key] = n
}

func (t *contentTree) longestPrefix(s string) (string, *contentNode) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for {
		if n, ok := t.nodes[s]; ok && n.p.kind == "section" {
			return s, n
		}
		if s == "/" || s == "." {
			return "", nil
		}
		s = path.Dir(s)
	}
}

func (t *contentTree) WalkBelow(prefix string, fn func(key string, n *contentNode) bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	keys := make([]string, 0, len(t.nodes))
	for k := range t.nodes {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if fn(k, t.nodes[k]) {
			return
		}
	}
}

func (n *contentNode) section() *contentNode {
	_, s := n.tree.longestPrefix(path.Dir(n.key))
	return s
}

func (p *pageState) CurrentSection() *pageState {
	if p.kind == "section" {
		return p
	}
	if s := p.n.section(); s != nil {
		return s.p
	}
	return nil
}

func (p *pageState) layout() string {
	if s := p.CurrentSection(); s != nil {
		return strings.TrimPrefix(s.n.key, "/") + "/single.html"
	}
	return "_default/single.html"
}

type pageMap struct {
	treePages *contentTree
}

type Site struct {
	pageMap *pageMap
	tmplMu  sync.Mutex
	tmplN   int
}

func (s *Site) executeTemplate(p *pageState) string {
	s.tmplMu.Lock()
	s.tmplN++
	s.tmplMu.Unlock()
	time.Sleep(100 * time.Millisecond)
	return "<h1>" + p.title + "</h1>"
}

func (s *Site) renderPage(p *pageState) {
	body := s.executeTemplate(p)
	p.rendered = p.layout() + ":" + body
}

func (s *Site) renderSection(prefix string) int {
	n := 0
	s.pageMap.treePages.WalkBelow(prefix, func(key string, cn *contentNode) bool {
		if cn.p.kind == "page" {
			s.renderPage(cn.p)
			n++
		}
		return false
	})
	return n
}

func (s *Site) addPage(key, title string) {
	s.pageMap.treePages.Insert(key, &contentNode{p: &pageState{title: title, kind: "page"}})
}

func main() {
	tree := newContentTree("pages")
	site := &Site{pageMap: &pageMap{treePages: tree}}
	for key, kind := range map[string]string{"/": "home", "/blog": "section", "/blog/first": "page", "/blog/second": "page", "/about": "page"} {
		tree.Insert(key, &contentNode{p: &pageState{title: path.Base(key), kind: kind}})
	}

	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		time.Sleep(30 * time.Millisecond)
		site.addPage("/blog/third", "third")
	}()

	n := site.renderSection("/blog")
	<-watcherDone
	fmt.Println("rendered", n, "pages in /blog,", site.tmplN, "templates executed")
}
