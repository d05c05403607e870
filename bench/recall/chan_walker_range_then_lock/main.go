// Pattern: gohugoio/hugo pagesCollector -> pagesProcessor. The collector
// walks the content tree while holding the site's write lock (it registers
// each section as it goes) and streams discovered files over a buffered
// channel; the processor goroutine ranges over that channel and only after
// the channel is closed does it take the site lock to publish its results.
//
// Why it is safe: the consumer's only Lock is after `range` ends, i.e. after
// close(files), which the collector executes after its last send. While the
// collector can still block on a send, the consumer is lock-free and keeps
// draining.
package main

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
)

const fileQueue = 8

type site struct {
	mu       sync.RWMutex
	sections map[string]int
	pages    []string
}

type contentFile struct {
	path    string
	section string
}

func (s *site) collect(tree []string, files chan<- contentFile) {
	defer close(files)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range tree {
		sec := strings.SplitN(p, "/", 2)[0]
		s.sections[sec]++
		files <- contentFile{path: p, section: sec}
	}
}

func (s *site) process(files <-chan contentFile, done chan<- struct{}) {
	defer close(done)
	var rendered []string
	for f := range files {
		if path.Ext(f.path) != ".md" {
			continue
		}
		rendered = append(rendered, strings.TrimSuffix(f.path, ".md")+"/index.html")
	}
	sort.Strings(rendered)
	// The collector has finished (files is closed): safe to take the lock.
	s.mu.Lock()
	s.pages = rendered
	s.mu.Unlock()
}

func main() {
	tree := []string{
		"posts/hello.md", "posts/world.md", "posts/cover.png",
		"docs/install.md", "docs/config.md", "docs/usage.md",
		"about/index.md", "posts/third.md", "docs/faq.md",
		"posts/fourth.md", "docs/api.md", "about/team.md",
	}
	s := &site{sections: make(map[string]int)}
	files := make(chan contentFile, fileQueue)
	done := make(chan struct{})

	go s.process(files, done)
	s.collect(tree, files)
	<-done

	s.mu.RLock()
	defer s.mu.RUnlock()
	fmt.Printf("sections: %v\n", s.sections)
	for _, p := range s.pages {
		fmt.Println("rendered", p)
	}
}
