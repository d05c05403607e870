// Project: golang/tools gopls (internal/lsp/cache/watcher.go WatchMap.Watch/Notify, session.go session.openOverlay, view.go view.getFile, gofile.go goFile.GetPackages, check.go loadParseTypecheck), July 2019 (code partly approximate).
// Bug: goFile.GetPackages holds the view mutex while loadParseTypecheck loads the package and adds newly discovered files to the view through getFile, which registers a callback with the session's WatchMap and so takes the watcher mutex. Opening a file runs session.openOverlay, whose WatchMap.Notify kept the watcher mutex held while invoking every callback, and the callback goFile.invalidateContent takes the view mutex, so opening many files at once deadlocks (golang/go#32910, golang/tools PR #129). The fix copies the callbacks under the watcher mutex and calls them after releasing it.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type watcher struct {
	id       uint64
	callback func()
}

type WatchMap struct {
	mu       sync.Mutex
	nextID   uint64
	watchers map[interface{}][]watcher
}

func NewWatchMap() *WatchMap {
	return &WatchMap{watchers: make(map[interface{}][]watcher)}
}

func (w *WatchMap) Watch(key interface{}, callback func()) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := w.nextID
	w.nextID++
	w.watchers[key] = append(w.watchers[key], watcher{id: id, callback: callback})
	return func() {
		// unwatch if invoked
		w.mu.Lock()
		defer w.mu.Unlock()
		entries := w.watchers[key]
		for i, entry := range entries {
			if entry.id == id {
				entries[i] = entries[len(entries)-1]
				w.watchers[key] = entries[:len(entries)-1]
				return
			}
		}
	}
}

func (w *WatchMap) Notify(key interface{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, entry := range w.watchers[key] {
		entry.callback()
	}
}

type session struct {
	openFiles     sync.Map
	overlayMu     sync.Mutex
	overlays      map[string][]byte
	filesWatchMap *WatchMap
}

func (s *session) openOverlay(ctx context.Context, uri string, data []byte) {
	s.openFiles.Store(uri, true)
	s.overlayMu.Lock()
	defer func() {
		s.overlayMu.Unlock()
		s.filesWatchMap.Notify(uri)
	}()
	s.overlays[uri] = data
}

type view struct {
	session *session
	// mu protects all mutable state of the view.
	mu          sync.Mutex
	filesByURI  map[string]*goFile
	packageFile map[string][]string // what go/packages.Load reports for a file
}

type goFile struct {
	view     *view
	uri      string
	handleMu sync.Mutex
	handle   []byte
	ast      interface{}
	pkgs     []string
}

// getFile is the unlocked internal implementation of GetFile.
func (v *view) getFile(ctx context.Context, uri string) *goFile {
	if f := v.filesByURI[uri]; f != nil {
		return f
	}
	f := &goFile{view: v, uri: uri}
	v.session.filesWatchMap.Watch(uri, func() {
		f.invalidateContent(ctx)
	})
	v.filesByURI[uri] = f
	return f
}

func (f *goFile) GetPackages(ctx context.Context) []string {
	f.view.mu.Lock()
	defer f.view.mu.Unlock()
	if f.isDirty() {
		if err := f.view.loadParseTypecheck(ctx, f); err != nil {
			return nil
		}
	}
	return f.pkgs
}

// isDirty assumes that the file's view's mutex is held by the caller.
func (f *goFile) isDirty() bool { return f.pkgs == nil || f.ast == nil }

func (v *view) loadParseTypecheck(ctx context.Context, f *goFile) error {
	time.Sleep(50 * time.Millisecond) // go/packages.Load runs `go list`
	for _, uri := range v.packageFile[f.uri] {
		// Call unlocked version of getFile since we hold the lock on the view.
		pf := v.getFile(ctx, uri)
		pf.pkgs = []string{"example.com/p"}
		pf.ast = struct{}{}
	}
	return nil
}

// invalidateContent invalidates the content of a Go file,
// including any position and type information that depends on it.
func (f *goFile) invalidateContent(ctx context.Context) {
	f.view.mu.Lock()
	defer f.view.mu.Unlock()

	f.handleMu.Lock()
	defer f.handleMu.Unlock()
	f.ast = nil
	f.pkgs = nil
	f.handle = nil
}

func main() {
	ctx := context.Background()
	s := &session{overlays: map[string][]byte{}, filesWatchMap: NewWatchMap()}
	v := &view{session: s, filesByURI: map[string]*goFile{}, packageFile: map[string][]string{
		"file:///p/b.go": {"file:///p/a.go", "file:///p/b.go", "file:///p/c.go"},
	}}
	v.mu.Lock()
	v.getFile(ctx, "file:///p/a.go")
	b := v.getFile(ctx, "file:///p/b.go")
	v.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // diagnostics for b.go
		defer wg.Done()
		fmt.Println("packages of b.go:", b.GetPackages(ctx))
	}()
	go func() { // textDocument/didOpen for a.go
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		s.openOverlay(ctx, "file:///p/a.go", []byte("package p"))
	}()
	wg.Wait()
	fmt.Println("done")
}
