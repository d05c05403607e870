package callbackonce

import (
	"strings"
	"sync"
)

// A sync.Once function that locks on a flag its maker was passed (hugo's
// Page.initPlain(lock bool)): the function runs with the flag the call
// gives. Called with true under the lock, the Once's function locks it
// again.
type Page struct {
	contentMu sync.Mutex
	plainOnce sync.Once
	content   string
	plain     string
}

func (p *Page) initPlain(lock bool) {
	p.plainOnce.Do(func() {
		if lock {
			p.contentMu.Lock()
			defer p.contentMu.Unlock()
		}
		p.plain = strings.TrimSpace(p.content)
	})
}

func (p *Page) Plain() string {
	p.initPlain(true)
	return p.plain
}

func (p *Page) render() {
	p.contentMu.Lock()
	defer p.contentMu.Unlock()
	p.content = "<p>x</p>"
	_ = p.Plain() // want `Page.contentMu locked again by Page.Plain -> Page.initPlain -> sync.Once.Do -> Page.initPlain.func1 \(at constflag.go:\d+\) while held since constflag.go:\d+: self-deadlock \[double-lock\]`
}

// The same call with false, under the lock: the Once's function does not
// lock. Silent.
func (p *Page) summarize() {
	p.contentMu.Lock()
	defer p.contentMu.Unlock()
	p.initPlain(false)
}
