// Modelled on Hugo's HugoSites.Build (hugolib/hugo_sites_build.go): the build
// mutex is held for the whole build, including while waiting for the page
// render workers. Workers never touch the build mutex; they record results
// under a separate stats mutex and atomic counters.

package main

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

type Page struct {
	Path    string
	Content string
}

type buildStats struct {
	mu        sync.Mutex
	bySection map[string]int
	bytes     atomic.Int64
	rendered  atomic.Int64
}

type HugoSites struct {
	buildMu sync.Mutex // serialises Build calls
	pages   []Page
	builds  int
	stats   *buildStats
}

func renderPage(p Page) string {
	var b strings.Builder
	b.WriteString("<html><body><h1>")
	b.WriteString(p.Path)
	b.WriteString("</h1>")
	b.WriteString(strings.ToUpper(p.Content))
	b.WriteString("</body></html>")
	return b.String()
}

func (st *buildStats) record(p Page, out string) {
	section := strings.SplitN(strings.TrimPrefix(p.Path, "/"), "/", 2)[0]
	st.mu.Lock()
	st.bySection[section]++
	st.mu.Unlock()
	st.bytes.Add(int64(len(out)))
	st.rendered.Add(1)
}

func (h *HugoSites) Build(numWorkers int) (int, error) {
	h.buildMu.Lock()
	defer h.buildMu.Unlock()
	h.builds++

	jobs := make(chan Page)
	var wg sync.WaitGroup
	for i := 0; i < numWorkers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				h.stats.record(p, renderPage(p))
			}
		}()
	}
	for _, p := range h.pages {
		jobs <- p
	}
	close(jobs)
	wg.Wait() // buildMu still held; workers only use stats.mu and atomics

	return len(h.pages), nil
}

func (h *HugoSites) BuildCount() int {
	h.buildMu.Lock()
	defer h.buildMu.Unlock()
	return h.builds
}

func main() {
	h := &HugoSites{stats: &buildStats{bySection: make(map[string]int)}}
	for _, sec := range []string{"posts", "docs", "tags"} {
		for i := 0; i < 25; i++ {
			h.pages = append(h.pages, Page{
				Path:    fmt.Sprintf("/%s/page-%d", sec, i),
				Content: fmt.Sprintf("content for %s %d", sec, i),
			})
		}
	}

	// `hugo server`: the file watcher and the initial build race to rebuild,
	// while the live-reload handler polls the stats.
	var wg sync.WaitGroup
	for b := 0; b < 3; b++ {
		wg.Add(1)
		go func(b int) {
			defer wg.Done()
			if _, err := h.Build(2 + b); err != nil {
				panic(err)
			}
		}(b)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			h.stats.mu.Lock()
			_ = len(h.stats.bySection)
			h.stats.mu.Unlock()
			_ = h.stats.rendered.Load()
		}
	}()
	wg.Wait()

	fmt.Printf("builds=%d rendered=%d bytes=%d\n", h.BuildCount(), h.stats.rendered.Load(), h.stats.bytes.Load())
	h.stats.mu.Lock()
	for _, sec := range []string{"posts", "docs", "tags"} {
		fmt.Printf("  %s: %d\n", sec, h.stats.bySection[sec])
	}
	h.stats.mu.Unlock()
	if h.stats.rendered.Load() != int64(3*len(h.pages)) {
		panic("missing pages")
	}
}
