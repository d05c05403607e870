// Project: hugo (hugolib/page__tree.go, hugolib/page.go)
// FIXED twin of hugo_page_string: assembleSections only records the
// duplicates while holding m.mu and formats/logs them after unlocking, so
// pageState.String() (which RLocks m.mu via the back-pointer) runs unlocked.
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

type duplicateSection struct {
	path        string
	existing, p *pageState
}

func (m *pageMap) assembleSections(pages map[string]*pageState) {
	var dups []duplicateSection
	m.mu.Lock()
	for path, p := range pages {
		if existing, found := m.sections[path]; found {
			dups = append(dups, duplicateSection{path, existing, p})
			continue
		}
		m.sections[path] = p
		m.paths[p] = path
	}
	m.mu.Unlock()
	for _, d := range dups {
		m.warnf("duplicate section %q: %s and %s", d.path, d.existing, d.p)
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
