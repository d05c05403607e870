// Project: golang/tools gopls (internal/lsp/cache/gofile.go goFile.isDirty, GetCheckPackageHandles; file.go fileBase.Handle; view.go view.SetContent, goFile.invalidateContent, view.remove; session.go SetOverlay; watcher.go WatchMap), August 2019.
// Bug: diagnostics call GetCheckPackageHandles, whose isDirty locks the file's goFile.mu and then fetches the file handle through fileBase.Handle, which locks handleMu. A didChange runs view.SetContent, which sets the overlay and notifies the file watcher; the callback goFile.invalidateContent holds handleMu while view.remove drops the package from every file of the package, locking goFile.mu of each, so the two requests deadlock on goFile.mu and handleMu (golang/go#33992). The fix takes the file handle before goFile.mu and passes it to isDirty and wrongParseMode.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type packageID string

type FileHandle struct {
	uri     string
	version int
}

type session struct {
	overlayMu     sync.Mutex
	overlays      map[string]int // uri -> overlay version
	filesWatchMap *WatchMap
}

func (s *session) GetFile(uri string) FileHandle {
	s.overlayMu.Lock()
	defer s.overlayMu.Unlock()
	return FileHandle{uri: uri, version: s.overlays[uri]}
}

func (s *session) SetOverlay(uri string, data []byte) {
	s.overlayMu.Lock()
	defer func() {
		s.overlayMu.Unlock()
		s.filesWatchMap.Notify(uri)
	}()
	s.overlays[uri]++
}

type WatchMap struct {
	mu       sync.Mutex
	watchers map[string][]func()
}

func (w *WatchMap) Watch(key string, callback func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watchers[key] = append(w.watchers[key], callback)
}

func (w *WatchMap) Notify(key string) {
	// Make a copy of the watcher callbacks so we don't need to hold
	// the mutex during the callbacks (to avoid deadlocks).
	w.mu.Lock()
	callbacks := append([]func(){}, w.watchers[key]...)
	w.mu.Unlock()
	for _, cb := range callbacks {
		cb()
	}
}

type metadata struct {
	files   []string
	parents map[packageID]bool
}

type metadataCache struct {
	mu       sync.Mutex // guards packages
	packages map[packageID]*metadata
}

type view struct {
	session    *session
	mu         sync.Mutex
	mcache     *metadataCache
	filesByURI map[string]*goFile
}

type fileBase struct {
	uri      string
	view     *view
	handleMu sync.Mutex
	handle   *FileHandle
}

func (f *fileBase) Handle(ctx context.Context) FileHandle {
	f.handleMu.Lock()
	defer f.handleMu.Unlock()
	if f.handle == nil {
		h := f.view.session.GetFile(f.uri)
		f.handle = &h
	}
	return *f.handle
}

type goFile struct {
	fileBase

	// mu protects all mutable state of the Go file.
	mu             sync.Mutex
	missingImports map[string]struct{}
	cphs           map[packageID][]FileHandle
}

func (f *goFile) GetCheckPackageHandles(ctx context.Context) (int, error) {
	if f.isDirty(ctx) {
		return 0, fmt.Errorf("%s needs to be reloaded", f.uri)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.cphs), nil
}

// isDirty is true if the file needs to be type-checked.
func (f *goFile) isDirty(ctx context.Context) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cphs) == 0 || len(f.missingImports) > 0 {
		return true
	}
	fh := f.Handle(ctx)
	for _, files := range f.cphs {
		for _, file := range files {
			if file == fh {
				return false
			}
		}
	}
	return true
}

func (v *view) SetContent(ctx context.Context, uri string, content []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.session.SetOverlay(uri, content)
}

func (f *goFile) invalidateContent(ctx context.Context) {
	f.view.mcache.mu.Lock()
	defer f.view.mcache.mu.Unlock()
	var toDelete []packageID
	f.mu.Lock()
	for id := range f.cphs {
		toDelete = append(toDelete, id)
	}
	f.mu.Unlock()

	f.handleMu.Lock()
	defer f.handleMu.Unlock()
	for _, id := range toDelete {
		f.view.remove(ctx, id, map[packageID]struct{}{})
	}
	f.handle = nil
}

// remove invalidates a package and its reverse dependencies.
func (v *view) remove(ctx context.Context, id packageID, seen map[packageID]struct{}) {
	m, ok := v.mcache.packages[id]
	if _, done := seen[id]; done || !ok {
		return
	}
	seen[id] = struct{}{}
	for parentID := range m.parents {
		v.remove(ctx, parentID, seen)
	}
	time.Sleep(50 * time.Millisecond) // a large reverse-dependency graph
	for _, uri := range m.files {
		gof := v.filesByURI[uri]
		gof.mu.Lock()
		delete(gof.cphs, id)
		gof.mu.Unlock()
	}
}

func main() {
	ctx := context.Background()
	s := &session{overlays: map[string]int{}, filesWatchMap: &WatchMap{watchers: map[string][]func(){}}}
	v := &view{session: s, filesByURI: map[string]*goFile{}, mcache: &metadataCache{packages: map[packageID]*metadata{}}}
	uri := "file:///src/p/a.go"
	f := &goFile{fileBase: fileBase{uri: uri, view: v}}
	f.cphs = map[packageID][]FileHandle{"p": {s.GetFile(uri)}}
	v.filesByURI[uri] = f
	v.mcache.packages["p"] = &metadata{files: []string{uri}, parents: map[packageID]bool{}}
	s.filesWatchMap.Watch(uri, func() { f.invalidateContent(ctx) })

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // textDocument/didChange
		defer wg.Done()
		v.SetContent(ctx, uri, []byte("package p // edited"))
	}()
	go func() { // diagnostics for the file
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		n, err := f.GetCheckPackageHandles(ctx)
		fmt.Println("diagnostics:", n, err)
	}()
	wg.Wait()
}
