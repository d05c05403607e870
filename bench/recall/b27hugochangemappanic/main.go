// Project: gohugoio/hugo (hugolib/hugo_sites.go, hugolib/pages_capture.go)
// PR:      gohugoio/hugo#7191 "hugolib/hugo_sites: Add Unlock before panic" (v0.69.1).
//
// Bug: in server/watch mode HugoSites keeps a contentChangeMap that records
// which directories are leaf/branch bundles, so that a file-system event can be
// resolved to the bundle root on rebuild. contentChangeMap.add takes m.mu.Lock()
// and, for an unexpected bundleDirType, panics("invalid bundle type") without
// releasing it. The panic is recovered by the build (herrors.Recover-style
// recover around the content collection) and reported as a build error, but the
// write lock on the change map stays held. The next file-system event makes the
// watcher call resolveAndRemove, whose m.mu.RLock() blocks forever: the server
// stops rebuilding. The fix unlocks m.mu before panicking.
//
// Deadlocking acquisition: m.mu.RLock() in contentChangeMap.resolveAndRemove
// (line 67), the write lock taken at line 49 having been leaked by the panic at line 59.
package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

type bundleDirType int

const (
	bundleNot bundleDirType = iota
	bundleLeaf
	bundleBranch
)

// Used in partial reloading to determine if the change is in a bundle.
type contentChangeMap struct {
	mu sync.RWMutex

	// Holds directories with leaf bundles (a *radix.Tree in Hugo).
	leafBundles map[string]bool
	// Holds directories with branch bundles.
	branchBundles map[string]bool

	symContentMu sync.Mutex
	symContent   map[string]map[string]bool
}

const FilePathSeparator = string(filepath.Separator)

func (m *contentChangeMap) add(dirname string, tp bundleDirType) {
	m.mu.Lock()
	if !strings.HasSuffix(dirname, FilePathSeparator) {
		dirname += FilePathSeparator
	}
	switch tp {
	case bundleBranch:
		m.branchBundles[dirname] = true
	case bundleLeaf:
		m.leafBundles[dirname] = true
	default:
		panic("invalid bundle type")
	}
	m.mu.Unlock()
}

// resolveAndRemove resolves the given filename to the root folder of a bundle,
// if relevant, and removes the entry (the partial build re-adds it).
func (m *contentChangeMap) resolveAndRemove(filename string) (string, bundleDirType) {
	m.mu.RLock()
	defer m.mu.RUnlock()

	dir, _ := filepath.Split(filename)
	if _, found := m.branchBundles[dir]; found {
		delete(m.branchBundles, dir)
		return dir, bundleBranch
	}
	if _, found := m.leafBundles[dir]; found {
		delete(m.leafBundles, dir)
		return dir, bundleLeaf
	}
	return dir, bundleNot
}

// pagesCollector walks /content and tells the change map about bundles.
type pagesCollector struct {
	contentChanges *contentChangeMap
}

func classifyBundleDir(files []string) bundleDirType {
	for _, f := range files {
		switch f {
		case "index.md":
			return bundleLeaf
		case "_index.md":
			return bundleBranch
		}
	}
	return bundleNot // e.g. a directory holding only an index.html
}

func (c *pagesCollector) collectDir(dir string, files []string) {
	tp := classifyBundleDir(files)
	if c.contentChanges != nil {
		c.contentChanges.add(dir, tp)
	}
}

type HugoSites struct {
	ContentChanges *contentChangeMap
}

// process recovers panics from the collector and turns them into build errors.
func (h *HugoSites) process(dirs map[string][]string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("collect content: panic: %v", r)
		}
	}()
	c := &pagesCollector{contentChanges: h.ContentChanges}
	for _, dir := range []string{"/content/posts/", "/content/about/"} {
		c.collectDir(dir, dirs[dir])
	}
	return nil
}

// rebuild is what the server's watcher does for a batch of fsnotify events.
func (h *HugoSites) rebuild(events []string) {
	for _, ev := range events {
		dir, tp := h.ContentChanges.resolveAndRemove(ev)
		fmt.Printf("changed %s -> bundle %s (type %d)\n", ev, dir, tp)
	}
}

func main() {
	h := &HugoSites{ContentChanges: &contentChangeMap{
		leafBundles:   map[string]bool{},
		branchBundles: map[string]bool{},
		symContent:    map[string]map[string]bool{},
	}}
	err := h.process(map[string][]string{
		"/content/posts/": {"_index.md", "first.md"},
		"/content/about/": {"index.html"},
	})
	fmt.Println("initial build:", err)

	// The user fixes the content and saves a file: the watcher fires.
	h.rebuild([]string{"/content/posts/first.md"})
	fmt.Println("rebuilt")
}
