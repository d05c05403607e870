package implicitstring

import (
	"fmt"
	"log"
	"sync"
)

// A package's own printf wrapper formats its operands as the function it
// wraps does: `p.warnf("%s", p)` under p.mu calls p.String there.
type Page struct {
	mu     sync.RWMutex
	title  string
	logger *log.Logger
}

func (p *Page) String() string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return "page " + p.title
}

func (p *Page) warnf(format string, args ...any) {
	p.logger.Printf("WARN "+format, args...)
}

func (p *Page) errorf(format string, args ...any) error {
	return fmt.Errorf("page: "+format, args...)
}

func (p *Page) rename(title string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if title == "" {
		p.warnf("empty title for %s", p) // want `Page.mu locked again by Page.String \(at wrapper.go:18\) while held since wrapper.go:32: self-deadlock \[double-lock\]`
		return
	}
	p.title = title
}

// Correct: formatting a field under the lock, or p after the unlock.
func (p *Page) retitle(title string) error {
	p.mu.Lock()
	old := p.title
	if title == old {
		defer p.mu.Unlock()
		return p.errorf("title %q unchanged", old)
	}
	p.title = title
	p.mu.Unlock()
	p.warnf("%s renamed from %q", p, old)
	return nil
}
