// Project: golang/tools (gopls, internal/lsp/cache)
// Bug: Session.DidModifyFiles held s.viewMu while updating overlays (which takes
// s.overlayMu), while Session.GetFile held s.overlayMu on a cache miss and asked
// viewOf for the owning view (which takes s.viewMu): AB-BA between the two
// session mutexes, hanging the server when an edit raced with a file read.
// Fix: update overlays before acquiring viewMu, so overlayMu is never taken
// with viewMu held (lock order is always overlayMu -> viewMu).

package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type URI string

type FileKind int

const (
	Go FileKind = iota
	Mod
	Sum
)

type overlay struct {
	uri     URI
	text    []byte
	version int32
	kind    FileKind
	saved   bool
}

type FileModification struct {
	URI     URI
	Action  string
	Version int32
	Text    []byte
}

type View struct {
	name       string
	folder     URI
	mu         sync.Mutex
	knownFiles map[URI]bool
	snapshotID uint64
}

func (v *View) contains(uri URI) bool {
	return strings.HasPrefix(string(uri), string(v.folder))
}

func (v *View) invalidateContent(changes map[URI]*overlay) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for uri := range changes {
		if v.contains(uri) {
			v.knownFiles[uri] = true
		}
	}
	v.snapshotID++
}

type Session struct {
	id string

	viewMu  sync.Mutex
	views   []*View
	viewMap map[URI]*View

	overlayMu sync.Mutex
	overlays  map[URI]*overlay
}

func NewSession() *Session {
	v := &View{name: "proj", folder: "file:///home/user/proj", knownFiles: map[URI]bool{}}
	return &Session{
		id:       "1",
		views:    []*View{v},
		viewMap:  map[URI]*View{},
		overlays: map[URI]*overlay{},
	}
}

// cancelDiagnostics stands in for cancelling in-flight snapshot work.
func (s *Session) cancelDiagnostics() { time.Sleep(50 * time.Millisecond) }

func (s *Session) DidModifyFiles(changes []FileModification) error {
	overlays, err := s.updateOverlays(changes)
	if err != nil {
		return err
	}

	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	s.cancelDiagnostics()
	for _, v := range s.views {
		v.invalidateContent(overlays)
	}
	return nil
}

func (s *Session) updateOverlays(changes []FileModification) (map[URI]*overlay, error) {
	s.overlayMu.Lock()
	defer s.overlayMu.Unlock()
	res := map[URI]*overlay{}
	for _, c := range changes {
		o, ok := s.overlays[c.URI]
		if ok && c.Version <= o.version {
			return nil, fmt.Errorf("updateOverlays: stale version %d for %s", c.Version, c.URI)
		}
		o = &overlay{uri: c.URI, text: c.Text, version: c.Version, saved: c.Action == "save"}
		s.overlays[c.URI] = o
		res[c.URI] = o
	}
	return res, nil
}

// readFromDisk stands in for the file system read on an overlay miss.
func (s *Session) readFromDisk(uri URI) []byte {
	time.Sleep(50 * time.Millisecond)
	return []byte("package b\n")
}

func (s *Session) GetFile(uri URI) (*overlay, error) {
	s.overlayMu.Lock()
	defer s.overlayMu.Unlock()
	if o, ok := s.overlays[uri]; ok {
		return o, nil
	}
	text := s.readFromDisk(uri)
	v := s.viewOf(uri)
	if v == nil {
		return nil, fmt.Errorf("no view for %s", uri)
	}
	return &overlay{uri: uri, text: text, kind: Go}, nil
}

func (s *Session) viewOf(uri URI) *View {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	if v, ok := s.viewMap[uri]; ok {
		return v
	}
	var best *View
	for _, v := range s.views {
		if v.contains(uri) && (best == nil || len(v.folder) > len(best.folder)) {
			best = v
		}
	}
	s.viewMap[uri] = best
	return best
}

func main() {
	s := NewSession()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		err := s.DidModifyFiles([]FileModification{{
			URI: "file:///home/user/proj/a.go", Action: "change", Version: 2, Text: []byte("package a\n"),
		}})
		if err != nil {
			fmt.Println(err)
		}
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		if _, err := s.GetFile("file:///home/user/proj/b.go"); err != nil {
			fmt.Println(err)
		}
	}()
	wg.Wait()
	fmt.Println("done")
}
