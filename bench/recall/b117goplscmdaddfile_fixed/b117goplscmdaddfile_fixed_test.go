// Project: golang/tools gopls (internal/lsp/cmd/cmd.go connection.AddFile and cmdClient.PublishDiagnostics; internal/lsp/text_synchronization.go didOpen and didModifyFiles; internal/lsp/diagnostics.go mustPublishDiagnostics and publishDiagnostics), gopls v0.9/v0.10, October 2022.
// Bug: the command-line client's AddFile holds cmdClient.filesMu while it sends textDocument/didOpen to the in-process server, and didModifyFiles marks the opened file with mustPublishDiagnostics, which locks Server.diagnosticsMu. The diagnostics goroutine started by the previous AddFile holds diagnosticsMu in publishDiagnostics while it calls the client's PublishDiagnostics, which locks filesMu, so opening several files quickly (gopls references with many locations) deadlocks AB-BA on filesMu and diagnosticsMu (issue golang/go#56450); the fix stops holding filesMu across the DidOpen call (fix CL approximate).
package b117goplscmdaddfilefixed

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// span / protocol

type URI string

type Diagnostic struct{ Message string }

type DidOpenTextDocumentParams struct {
	URI     URI
	Version int32
	Text    string
}

type PublishDiagnosticsParams struct {
	URI         URI
	Version     int32
	Diagnostics []Diagnostic
}

type Client interface {
	PublishDiagnostics(ctx context.Context, params *PublishDiagnosticsParams) error
}

type LSPServer interface {
	DidOpen(ctx context.Context, params *DidOpenTextDocumentParams) error
}

// source

type FileModification struct {
	URI    URI
	Action string // "open", "change", "close"
	Text   []byte
}

type VersionedFileHandle interface{ Version() int32 }

type Snapshot interface {
	GlobalID() uint64
	FindFile(uri URI) VersionedFileHandle
	Diagnose(ctx context.Context) map[URI][]Diagnostic
}

type Session interface {
	DidModifyFiles(ctx context.Context, changes []FileModification) (map[Snapshot][]URI, func(), error)
}

// internal/lsp: the server side

type fileReports struct {
	mustPublish         bool
	reports             []Diagnostic
	publishedSnapshotID uint64
}

type Server struct {
	client  Client
	session Session

	diagnosticsMu sync.Mutex
	diagnostics   map[URI]*fileReports
}

func (s *Server) DidOpen(ctx context.Context, params *DidOpenTextDocumentParams) error {
	return s.didOpen(ctx, params)
}

func (s *Server) didOpen(ctx context.Context, params *DidOpenTextDocumentParams) error {
	return s.didModifyFiles(ctx, []FileModification{{URI: params.URI, Action: "open", Text: []byte(params.Text)}})
}

func (s *Server) didModifyFiles(ctx context.Context, modifications []FileModification) error {
	snapshots, release, err := s.session.DidModifyFiles(ctx, modifications)
	if err != nil {
		return err
	}
	// golang/go#50267: diagnostics should be re-sent after an open or close.
	for _, uris := range snapshots {
		for _, uri := range uris {
			s.mustPublishDiagnostics(uri)
		}
	}
	go func() {
		s.diagnoseSnapshots(snapshots)
		release()
	}()
	return nil
}

func (s *Server) mustPublishDiagnostics(uri URI) {
	s.diagnosticsMu.Lock()
	defer s.diagnosticsMu.Unlock()
	if s.diagnostics[uri] == nil {
		s.diagnostics[uri] = &fileReports{}
	}
	s.diagnostics[uri].mustPublish = true
}

func (s *Server) diagnoseSnapshots(snapshots map[Snapshot][]URI) {
	for snapshot := range snapshots {
		ctx := context.Background()
		diags := snapshot.Diagnose(ctx)
		s.diagnosticsMu.Lock()
		for uri, d := range diags {
			s.diagnostics[uri].reports = d
		}
		s.diagnosticsMu.Unlock()
		s.publishDiagnostics(ctx, true, snapshot)
	}
}

func (s *Server) publishDiagnostics(ctx context.Context, final bool, snapshot Snapshot) {
	s.diagnosticsMu.Lock()
	defer s.diagnosticsMu.Unlock()

	for uri, r := range s.diagnostics {
		// If we've already delivered diagnostics for a future snapshot for this
		// file, do not deliver them.
		if r.publishedSnapshotID > snapshot.GlobalID() {
			continue
		}
		version := int32(0)
		if fh := snapshot.FindFile(uri); fh != nil { // file may have been deleted
			version = fh.Version()
		}
		if !r.mustPublish && !final {
			continue
		}
		if err := s.client.PublishDiagnostics(ctx, &PublishDiagnosticsParams{
			URI: uri, Version: version, Diagnostics: r.reports,
		}); err == nil {
			r.publishedSnapshotID = snapshot.GlobalID()
			r.mustPublish = false
		}
	}
}

// internal/lsp/cmd: the command-line client

type cmdFile struct {
	uri         URI
	content     string
	err         error
	added       bool
	diagnostics []Diagnostic
}

type cmdClient struct {
	filesMu sync.Mutex
	files   map[URI]*cmdFile
}

func (c *cmdClient) PublishDiagnostics(ctx context.Context, p *PublishDiagnosticsParams) error {
	// Don't worry about diagnostics without versions.
	if p.Version == 0 {
		return nil
	}

	c.filesMu.Lock()
	defer c.filesMu.Unlock()

	file := c.getFile(ctx, p.URI)
	file.diagnostics = p.Diagnostics
	return nil
}

func (c *cmdClient) getFile(ctx context.Context, uri URI) *cmdFile {
	file, found := c.files[uri]
	if !found || file.err != nil {
		file = &cmdFile{uri: uri, content: "package p\n"}
		c.files[uri] = file
	}
	return file
}

type connection struct {
	LSPServer
	Client *cmdClient
}

func (c *connection) AddFile(ctx context.Context, uri URI) *cmdFile {
	c.Client.filesMu.Lock()
	file := c.Client.getFile(ctx, uri)
	// This should never happen.
	if file == nil {
		c.Client.filesMu.Unlock()
		return &cmdFile{uri: uri, err: fmt.Errorf("no file found for %s", uri)}
	}
	if file.err != nil || file.added {
		c.Client.filesMu.Unlock()
		return file
	}
	file.added = true
	p := &DidOpenTextDocumentParams{URI: uri, Version: 1, Text: file.content}
	// Don't hold filesMu while calling into the server: its diagnostics
	// goroutines call back into PublishDiagnostics (golang/go#56450).
	c.Client.filesMu.Unlock()
	if err := c.LSPServer.DidOpen(ctx, p); err != nil {
		c.Client.filesMu.Lock()
		file.err = fmt.Errorf("%v: %v", uri, err)
		c.Client.filesMu.Unlock()
	}
	return file
}

// Test doubles for the cache package: the first snapshot is slow to read its
// files while it is published; opening the next file lets it continue.

type fileHandle int32

func (f fileHandle) Version() int32 { return int32(f) }

type fakeSnapshot struct {
	id      uint64
	uris    []URI
	onFind  func()
	findOne sync.Once
}

func (s *fakeSnapshot) GlobalID() uint64 { return s.id }
func (s *fakeSnapshot) FindFile(uri URI) VersionedFileHandle {
	if s.onFind != nil {
		s.findOne.Do(s.onFind)
	}
	return fileHandle(1)
}
func (s *fakeSnapshot) Diagnose(ctx context.Context) map[URI][]Diagnostic {
	return map[URI][]Diagnostic{s.uris[0]: {{Message: "unused variable"}}}
}

type fakeSession struct {
	next               uint64 // the test's AddFile calls are sequential
	publishing, resume chan struct{}
}

func (s *fakeSession) DidModifyFiles(ctx context.Context, changes []FileModification) (map[Snapshot][]URI, func(), error) {
	s.next++
	snap := &fakeSnapshot{id: s.next, uris: []URI{changes[0].URI}}
	if s.next == 1 {
		snap.onFind = func() { close(s.publishing); <-s.resume }
	} else {
		<-s.publishing
		close(s.resume)
	}
	return map[Snapshot][]URI{snap: snap.uris}, func() {}, nil
}

func TestB117goplscmdaddfileFixed(t *testing.T) {
	ctx := context.Background()
	client := &cmdClient{files: map[URI]*cmdFile{}}
	session := &fakeSession{publishing: make(chan struct{}), resume: make(chan struct{})}
	server := &Server{client: client, session: session, diagnostics: map[URI]*fileReports{}}
	conn := &connection{LSPServer: server, Client: client}

	// gopls references: open the query file, then every file with a location.
	for _, uri := range []URI{"file:///a/a.go", "file:///a/b.go"} {
		if f := conn.AddFile(ctx, uri); f.err != nil {
			t.Fatal(f.err)
		}
	}
}
