// Project: hugo (hugolib/page__tree.go, hugolib/page.go)
// Bug: pageMap.assembleSections holds m.mu (write) while walking the tree and
// logs a warning about a duplicate section with "%s" of the *pageState.
// pageState.String() resolves its path through its back-pointer to the
// pageMap, which takes m.mu.RLock(): the same goroutine deadlocks on itself.
package main

import (
	"fmt"
	"log"
	"os"
	"sync"
)

type pageMap struct {
	mu       sync.RWMutex
	sections map[string]*pageState
	paths    map[*pageState]string
	logger   *log.Logger
}

type pageState struct {
	m     *pageMap // back-pointer
	title string
}

func (p *pageState) String() string {
	if path := p.sourceRef(); path != "" {
		return fmt.Sprintf("Page(%s)", path)
	}
	return fmt.Sprintf("Page(%q)", p.title)
}

func (p *pageState) sourceRef() string {
	return p.m.pathFor(p)
}

func (m *pageMap) pathFor(p *pageState) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.paths[p]
}

func (m *pageMap) warnf(format string, args ...interface{}) {
	m.logger.Printf("WARN "+format, args...)
}

func (m *pageMap) assembleSections(pages map[string]*pageState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for path, p := range pages {
		if existing, found := m.sections[path]; found {
			m.warnf("duplicate section %q: %s and %s", path, existing, p)
			continue
		}
		m.sections[path] = p
		m.paths[p] = path
	}
}

func newPageMap() *pageMap {
	return &pageMap{
		sections: map[string]*pageState{},
		paths:    map[*pageState]string{},
		logger:   log.New(os.Stderr, "", 0),
	}
}

func main() {
	m := newPageMap()
	blog := &pageState{m: m, title: "Blog"}
	m.assembleSections(map[string]*pageState{"/blog": blog})
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.assembleSections(map[string]*pageState{"/blog": {m: m, title: "Blog (2)"}})
	}()
	<-done
}
