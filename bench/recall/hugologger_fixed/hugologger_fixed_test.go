// Project: Hugo (gohugoio/hugo), helpers.DistinctLogger / deprecation warnings.
// Bug: approximate: DistinctLogger.Printf took l.Lock() and only then formatted the statement with
// fmt.Sprintf(format, v...); when one of the args was a Page, fmt called Page.String(), which went
// through the deprecated .Path accessor, which logs a deprecation warning through the same
// DistinctWarnLog -> l.Lock() again on the same goroutine (other render workers pile up behind it).
// Fix: format the log statement before taking the lock; the lock only guards the "seen" map.
package hugologger_fixed

import (
	"fmt"
	"io"
	"log"
	"sync"
	"testing"
)

type DistinctLogger struct {
	sync.RWMutex
	logger *log.Logger
	m      map[string]bool
}

func NewDistinctLogger(l *log.Logger) *DistinctLogger {
	return &DistinctLogger{logger: l, m: make(map[string]bool)}
}

// Printf will log the string returned from fmt.Sprintf given the arguments,
// but not if it has been logged before.
func (l *DistinctLogger) Printf(format string, v ...any) {
	logStatement := fmt.Sprintf(format, v...)
	l.Lock()
	defer l.Unlock()
	l.printIfNotPrinted("printf", logStatement)
}

// printIfNotPrinted requires l to be locked.
func (l *DistinctLogger) printIfNotPrinted(level, logStatement string) {
	key := level + logStatement
	if l.m[key] {
		return
	}
	l.logger.Print(logStatement)
	l.m[key] = true
}

var DistinctWarnLog = NewDistinctLogger(log.New(io.Discard, "WARN ", 0))

// Deprecated informs about a deprecation.
func Deprecated(item, alternative string) {
	DistinctWarnLog.Printf("DEPRECATED: %s is deprecated and will be removed in a future release. %s", item, alternative)
}

type File struct{ path string }

func (f *File) Path() string { return f.path }

type Page struct {
	title string
	kind  string
	file  *File
}

func (p *Page) File() *File { return p.file }

// Path is deprecated: use .File.Path.
func (p *Page) Path() string {
	Deprecated(".Page.Path", "Use .File.Path.")
	if p.file == nil {
		return ""
	}
	return p.file.Path()
}

func (p *Page) String() string {
	if p.file != nil {
		return fmt.Sprintf("Page(%s)", p.Path())
	}
	return fmt.Sprintf("Page(%q)", p.title)
}

type Site struct {
	pages   []*Page
	layouts map[string]bool
}

func (s *Site) renderPage(p *Page) {
	if !s.layouts[p.kind] {
		DistinctWarnLog.Printf("found no layout file for %q for kind %q on %s: You should create a template file which matches Hugo Layouts Lookup Rules for this combination.", "HTML", p.kind, p)
		return
	}
}

// renderPages renders the site's pages with a pool of workers, each taking every n-th page.
func (s *Site) renderPages(numWorkers int) {
	var wg sync.WaitGroup
	for i := 0; i < numWorkers; i++ {
		wg.Add(1)
		go func(start int) {
			defer wg.Done()
			for j := start; j < len(s.pages); j += numWorkers {
				s.renderPage(s.pages[j])
			}
		}(i)
	}
	wg.Wait()
}

func TestDistinctLoggerStringDeadlock(t *testing.T) {
	s := &Site{layouts: map[string]bool{"page": true}}
	s.pages = []*Page{
		{title: "Home", kind: "home"},
		{title: "About", kind: "section", file: &File{path: "about/_index.md"}},
		{title: "Post", kind: "taxonomy", file: &File{path: "tags/_index.md"}},
		{title: "Post", kind: "page", file: &File{path: "posts/p1.md"}},
	}
	s.renderPages(2)
}
