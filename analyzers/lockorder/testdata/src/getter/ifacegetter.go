package getter

import "sync"

// A getter reached through an interface with one implementation in the
// package, and a method returning its receiver, name what they return;
// which pointer field a getter reads tells two locks of one class apart
// when the fields never hold the same object (hugo's second collator,
// taken by ByParam so that ByTitle's order cannot meet it).
type Collator struct {
	sync.Mutex
	n int
}

type Language struct{ first, second *Collator }

func (l *Language) First() *Collator  { return l.first }
func (l *Language) Second() *Collator { return l.second }

type Site struct{ lang *Language }

func (s *Site) Current() *Site      { return s }
func (s *Site) Language() *Language { return s.lang }

type Page interface{ Site() *Site }

type page struct{ s *Site }

func (p *page) Site() *Site { return p.s }

func NewPage() Page {
	return &page{s: &Site{lang: &Language{first: &Collator{}, second: &Collator{}}}}
}

type sortCache struct {
	sync.Mutex
	m map[string]int
}

var pageCache = &sortCache{m: map[string]int{}}

// ByTitle: the cache, then the first collator.
func ByTitle(p Page) {
	pageCache.Lock()
	defer pageCache.Unlock()
	c := p.Site().Current().Language().First()
	c.Lock()
	c.n++
	c.Unlock()
}

// ByParam: the first collator, then the cache.
func ByParam(p Page) {
	c := p.Site().Current().Language().First()
	c.Lock()
	defer c.Unlock()
	pageCache.Lock() // want `lock order inversion: sortCache.Mutex then Collator.Mutex in ByTitle \(ifacegetter.go:\d+ -> ifacegetter.go:\d+\) but Collator.Mutex then sortCache.Mutex in ByParam \(ifacegetter.go:\d+ -> ifacegetter.go:\d+\) \[lock-order\]`
	pageCache.m["param"]++
	pageCache.Unlock()
}

type nameIndex struct {
	sync.Mutex
	m map[string]int
}

var nameCache = &nameIndex{m: map[string]int{}}

// ByName: another cache, then the first collator.
func ByName(p Page) {
	nameCache.Lock()
	defer nameCache.Unlock()
	c := p.Site().Current().Language().First()
	c.Lock()
	c.n++
	c.Unlock()
}

// ByDate: the second collator, then that cache: never the lock ByName
// takes under it. Silent.
func ByDate(p Page) {
	c := p.Site().Current().Language().Second()
	c.Lock()
	defer c.Unlock()
	nameCache.Lock()
	nameCache.m["date"]++
	nameCache.Unlock()
}

// lockFirst leaves the page's first collator locked and returns its
// unlock: the caller holds it, named through the interface's getter.
func lockFirst(p Page) (unlock func()) {
	c := p.Site().Current().Language().First()
	c.Lock()
	return func() { c.Unlock() }
}

type paramIndex struct {
	sync.Mutex
	m map[string]int
}

var paramCache = &paramIndex{m: map[string]int{}}

// ByWeight: the param cache, then the first collator.
func ByWeight(p Page) {
	paramCache.Lock()
	defer paramCache.Unlock()
	c := p.Site().Language().First()
	c.Lock()
	c.n++
	c.Unlock()
}

// ByParamHelper: the first collator, through lockFirst, then the param cache.
func ByParamHelper(p Page) {
	unlock := lockFirst(p)
	defer unlock()
	paramCache.Lock() // want `lock order inversion: paramIndex.Mutex then Collator.Mutex in ByWeight \(ifacegetter.go:\d+ -> ifacegetter.go:\d+\) but Collator.Mutex then paramIndex.Mutex in ByParamHelper \(ifacegetter.go:\d+ -> ifacegetter.go:\d+\) \[lock-order\]`
	paramCache.m["param"]++
	paramCache.Unlock()
}
