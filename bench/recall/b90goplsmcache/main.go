// Project: golang/tools gopls (internal/lsp/cache/check.go view.loadParseTypecheck, importer.getPkg/typeCheck; file.go fileBase.Handle; view.go goFile.invalidateContent; session.go session.openOverlay), July 2019.
// Bug: loadParseTypecheck holds the view's metadata cache mutex (mcache.mu) while the importer type-checks the package and reads each file through fileBase.Handle, which takes the file's handleMu. Opening a file runs session.openOverlay, whose watcher callback goFile.invalidateContent took handleMu first and then mcache.mu (and pcache.mu), so opening files while a package is being type-checked deadlocks (first deadlock of golang/go#32910, fixed by golang/tools PR #129, which makes invalidateContent take mcache.mu and pcache.mu before handleMu).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type packageID string

type session struct {
	overlayMu     sync.Mutex
	overlays      map[string][]byte
	filesWatchMap *WatchMap
}

func (s *session) GetFile(uri string) []byte {
	s.overlayMu.Lock()
	defer s.overlayMu.Unlock()
	return s.overlays[uri]
}

func (s *session) openOverlay(ctx context.Context, uri string, data []byte) {
	s.overlayMu.Lock()
	defer func() {
		s.overlayMu.Unlock()
		s.filesWatchMap.Notify(uri)
	}()
	s.overlays[uri] = data
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
	w.mu.Lock()
	callbacks := append([]func(){}, w.watchers[key]...)
	w.mu.Unlock()
	for _, cb := range callbacks {
		cb()
	}
}

type metadata struct {
	id    packageID
	files []string
}

type metadataCache struct {
	mu       sync.Mutex // guards both maps
	packages map[packageID]*metadata
}

type packageCache struct {
	mu       sync.Mutex
	packages map[packageID]string
}

type view struct {
	session    *session
	mu         sync.Mutex
	mcache     *metadataCache
	pcache     *packageCache
	filesByURI map[string]*goFile
}

type goFile struct {
	view     *view
	uri      string
	handleMu sync.Mutex
	handle   []byte
	ast      interface{}
	meta     *metadata
}

func (f *goFile) Handle(ctx context.Context) []byte {
	f.handleMu.Lock()
	defer f.handleMu.Unlock()
	if f.handle == nil {
		f.handle = f.view.session.GetFile(f.uri)
	}
	return f.handle
}

func (f *goFile) GetPackage(ctx context.Context) (string, error) {
	f.view.mu.Lock()
	defer f.view.mu.Unlock()
	if f.ast == nil {
		if err := f.view.loadParseTypecheck(ctx, f); err != nil {
			return "", err
		}
	}
	return f.view.pcache.packages[f.meta.id], nil
}

func (v *view) loadParseTypecheck(ctx context.Context, f *goFile) error {
	v.mcache.mu.Lock()
	defer v.mcache.mu.Unlock()

	time.Sleep(50 * time.Millisecond) // checkMetadata: go/packages.Load
	m := v.mcache.packages[f.meta.id]
	imp := &importer{view: v, seen: make(map[packageID]struct{})}
	_, err := imp.getPkg(ctx, m.id)
	return err
}

type importer struct {
	view *view
	seen map[packageID]struct{}
}

func (imp *importer) getPkg(ctx context.Context, id packageID) (string, error) {
	if _, ok := imp.seen[id]; ok {
		return "", fmt.Errorf("import cycle detected: %q", id)
	}
	imp.seen[id] = struct{}{}
	return imp.typeCheck(ctx, id)
}

func (imp *importer) typeCheck(ctx context.Context, id packageID) (string, error) {
	meta := imp.view.mcache.packages[id]
	size := 0
	for _, uri := range meta.files {
		gof := imp.view.filesByURI[uri]
		size += len(gof.Handle(ctx)) // parse the file
		gof.ast = struct{}{}
	}
	pkg := fmt.Sprintf("%s (%d bytes)", id, size)
	imp.view.pcache.mu.Lock()
	imp.view.pcache.packages[id] = pkg
	imp.view.pcache.mu.Unlock()
	return pkg, nil
}

// invalidateContent invalidates the content of a Go file,
// including any position and type information that depends on it.
func (f *goFile) invalidateContent(ctx context.Context) {
	f.handleMu.Lock()
	defer f.handleMu.Unlock()

	f.view.mcache.mu.Lock()
	defer f.view.mcache.mu.Unlock()

	f.view.pcache.mu.Lock()
	defer f.view.pcache.mu.Unlock()

	f.ast = nil
	delete(f.view.pcache.packages, f.meta.id)
	f.handle = nil
}

func main() {
	ctx := context.Background()
	s := &session{overlays: map[string][]byte{}, filesWatchMap: &WatchMap{watchers: map[string][]func(){}}}
	v := &view{session: s, filesByURI: map[string]*goFile{},
		mcache: &metadataCache{packages: map[packageID]*metadata{}},
		pcache: &packageCache{packages: map[packageID]string{}}}
	m := &metadata{id: "example.com/p", files: []string{"file:///p/a.go", "file:///p/b.go"}}
	v.mcache.packages[m.id] = m
	for _, uri := range m.files {
		f := &goFile{view: v, uri: uri, meta: m}
		v.filesByURI[uri] = f
		s.filesWatchMap.Watch(uri, func() { f.invalidateContent(ctx) })
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // diagnostics for a.go
		defer wg.Done()
		pkg, err := v.filesByURI["file:///p/a.go"].GetPackage(ctx)
		fmt.Println("package:", pkg, err)
	}()
	go func() { // textDocument/didOpen for b.go
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		s.openOverlay(ctx, "file:///p/b.go", []byte("package p\n"))
	}()
	wg.Wait()
	fmt.Println("done")
}
