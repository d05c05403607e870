package mustchain

import "sync"

// A double lock nine calls down, on the paths where the callers choose to
// call (an early return, a loop over the work), the function at the end
// locking on every path: the choice to call it is no guess at any depth
// (hugo's shortcode reaching a page's sync.Once through nine calls).
type Site struct {
	mu    sync.Mutex
	pages []*Doc
	words int
}

type Doc struct {
	text string
}

func (s *Site) Render() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r1() // want `Site.mu locked again by Site.r1 -> .* -> Site.count \(at deepsome.go:\d+, on the paths that call Site.count\) while held since deepsome.go:\d+: self-deadlock \[double-lock\]`
}

func (s *Site) r1() {
	if len(s.pages) == 0 {
		return
	}
	s.r2()
}

func (s *Site) r2() {
	for _, d := range s.pages {
		d.r3(s)
	}
}

func (d *Doc) r3(s *Site) { d.r4(s) }
func (d *Doc) r4(s *Site) { d.r5(s) }
func (d *Doc) r5(s *Site) { d.r6(s) }
func (d *Doc) r6(s *Site) { d.r7(s) }
func (d *Doc) r7(s *Site) { d.r8(s) }
func (d *Doc) r8(s *Site) { s.count(d.text) }

func (s *Site) count(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.words += len(text)
}

// The same depth, the function at the end locking on some of its paths
// only (its own test of what it is given): silent, as near.
func (s *Site) RenderCached() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c1()
}

func (s *Site) c1() {
	if len(s.pages) == 0 {
		return
	}
	for _, d := range s.pages {
		d.c2(s)
	}
}

func (d *Doc) c2(s *Site) { d.c3(s) }
func (d *Doc) c3(s *Site) { d.c4(s) }
func (d *Doc) c4(s *Site) { d.c5(s) }
func (d *Doc) c5(s *Site) { d.c6(s) }
func (d *Doc) c6(s *Site) { d.c7(s) }
func (d *Doc) c7(s *Site) { d.c8(s) }
func (d *Doc) c8(s *Site) { s.countIfNew(d.text) }

func (s *Site) countIfNew(text string) {
	if text == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.words += len(text)
}

var _ = []any{(*Site).Render, (*Site).RenderCached}
