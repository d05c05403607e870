// FIXED TWIN of ../hugopagemap: same program with the fix applied (see "FIX:" comments).
//
// Project: hugo (hugolib/content_map.go, content_map_page.go; `hugo server`).
//
// Bug (approximate; hugo ~0.7x content map): pageMap.withEveryBundlePage walks
// the content tree under the tree's read lock and invokes a callback for each
// page. While assembling/rendering a section page, the callback asks for the
// section's pages (pageState.RegularPages -> pageMap.getPagesInSection), which
// read-locks the same tree again. When the file watcher triggers a partial
// rebuild at that moment (pageMap.AddFilesBundle -> tree.Lock()), the pending
// writer blocks the nested RLock and `hugo server` hangs.
// Fix: collect the pages under the read lock and run the callbacks after
// releasing it.
package hugopagemap_fixed

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

type pageState struct {
	m       *pageMap
	path    string
	section string
	kind    string // "page" or "section"
	content string
}

// RegularPages is the .RegularPages template method.
func (p *pageState) RegularPages() []*pageState {
	if p.kind != "section" {
		return nil
	}
	return p.m.getPagesInSection(p.section)
}

type contentTree struct {
	Name  string
	nodes map[string]*pageState
}

type contentMap struct {
	treeMu sync.RWMutex // guards pages (and sections, taxonomies in real hugo)
	pages  *contentTree
}

type pageMap struct {
	*contentMap
}

func newPageMap() *pageMap {
	return &pageMap{&contentMap{pages: &contentTree{Name: "pages", nodes: map[string]*pageState{}}}}
}

func (m *pageMap) AddFilesBundle(p *pageState) {
	m.treeMu.Lock()
	defer m.treeMu.Unlock()
	p.m = m
	m.pages.nodes[p.path] = p
}

func (m *pageMap) getPagesInSection(section string) []*pageState {
	m.treeMu.RLock()
	defer m.treeMu.RUnlock()
	var pas []*pageState
	for _, p := range m.pages.nodes {
		if p.kind == "page" && p.section == section {
			pas = append(pas, p)
		}
	}
	sort.Slice(pas, func(i, j int) bool { return pas[i].path < pas[j].path })
	return pas
}

// withEveryBundlePage walks all pages in path order; fn returns true to stop.
func (m *pageMap) withEveryBundlePage(fn func(p *pageState) bool) {
	m.treeMu.RLock()
	keys := make([]string, 0, len(m.pages.nodes))
	for k := range m.pages.nodes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pages := make([]*pageState, 0, len(keys))
	for _, k := range keys {
		pages = append(pages, m.pages.nodes[k])
	}
	m.treeMu.RUnlock() // FIX: callbacks run without the tree lock held
	for _, p := range pages {
		if fn(p) {
			return
		}
	}
}

type Site struct {
	pageMap *pageMap
	out     map[string]string
}

// renderPages renders every page; section pages list their regular pages.
func (s *Site) renderPages() {
	s.pageMap.withEveryBundlePage(func(p *pageState) bool {
		s.out[p.path] = s.renderPage(p)
		return false
	})
}

func (s *Site) renderPage(p *pageState) string {
	var b strings.Builder
	b.WriteString(p.content)
	if p.kind == "section" {
		for _, rp := range p.RegularPages() {
			b.WriteString("\n- " + rp.path)
		}
	} else {
		time.Sleep(30 * time.Millisecond) // goldmark + shortcodes
	}
	return b.String()
}

func TestRenderDuringPartialRebuild(t *testing.T) {
	m := newPageMap()
	for _, p := range []*pageState{
		{path: "/a-intro", section: "a", kind: "page", content: "intro"},
		{path: "/b-posts", section: "posts", kind: "section", content: "Posts"},
		{path: "/posts/first", section: "posts", kind: "page", content: "first"},
	} {
		m.AddFilesBundle(p)
	}
	s := &Site{pageMap: m, out: map[string]string{}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // HugoSites.Build -> render
		defer wg.Done()
		s.renderPages()
	}()
	time.AfterFunc(10*time.Millisecond, func() { // fsnotify: content/posts/second.md created
		defer wg.Done()
		m.AddFilesBundle(&pageState{path: "/posts/second", section: "posts", kind: "page", content: "second"})
	})
	wg.Wait()

	if len(s.out) != 3 {
		t.Fatalf("rendered %d pages, want 3", len(s.out))
	}
}
