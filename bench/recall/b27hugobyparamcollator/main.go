// Project: gohugoio/hugo (resources/page/pages_sort.go, langs/language.go)
// Issue:   gohugoio/hugo#11039 "Potential deadlock in GroupByParam/ByParam",
// fixed by PR #11043 "Fix potential deadlock in ByParam" (v0.112.4).
//
// Bug: Pages.ByParam takes the current language's collator lock through
// collatorStringLess (coll.Lock(), released by the returned close func) and
// only then calls spc.get, which takes the global pageCache write lock to sort
// and cache the result. Pages.ByTitle does it the other way round: spc.get takes
// the pageCache lock and its apply func, collatorStringSort, then locks the
// very same collator (Language.Collator()). Two templates rendered in parallel
// (one ranging over .ByParam, one over .ByTitle) end in an AB-BA deadlock:
// collator -> pageCache vs pageCache -> collator. The fix gives ByParam its own
// collator (Language.Collator2()), so the two locks are never nested both ways.
//
// Deadlocking acquisitions: c.Lock() in pageCache.getP (line 77) for the ByParam
// goroutine, and coll.Lock() in collatorStringSort (line 91) for ByTitle.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Collator wraps a (non thread safe) collate.Collator.
type Collator struct{ sync.Mutex }

func (c *Collator) CompareStrings(a, b string) int { return strings.Compare(a, b) }

type Language struct{ collator1, collator2 *Collator }

func (l *Language) Collator() *Collator  { return l.collator1 }
func (l *Language) Collator2() *Collator { return l.collator2 }

type Site struct{ language *Language }

func (s *Site) Current() *Site      { return s }
func (s *Site) Language() *Language { return s.language }

type Page interface {
	Title() string
	Param(key any) (any, error)
	Site() *Site
}

type pageState struct {
	title, rank string
	s           *Site
}

func (p *pageState) Title() string              { return p.title }
func (p *pageState) Site() *Site                { return p.s }
func (p *pageState) Param(key any) (any, error) { return p.rank, nil }

type Pages []Page

type pageCache struct {
	sync.RWMutex
	m map[string]Pages
}

var spc = &pageCache{m: make(map[string]Pages)}

func (c *pageCache) get(key string, apply func(p Pages), pageLists ...Pages) (Pages, bool) {
	return c.getP(key, func(p *Pages) { apply(*p) }, pageLists...)
}

func (c *pageCache) getP(key string, apply func(p *Pages), pageLists ...Pages) (Pages, bool) {
	c.RLock()
	cached, ok := c.m[key]
	c.RUnlock()
	if ok {
		return cached, true
	}

	c.Lock() // ByParam blocks here while holding the collator lock
	defer c.Unlock()

	pagesCopy := append(Pages(nil), pageLists[0]...)
	apply(&pagesCopy)
	c.m[key] = pagesCopy
	return pagesCopy, false
}

func collatorStringSort(getString func(Page) string) func(p Pages) {
	return func(p Pages) {
		// Pages may be a mix of languages: use the currently rendered Site's.
		currentSite := p[0].Site().Current()
		coll := currentSite.Language().Collator()
		coll.Lock() // ByTitle blocks here while holding the pageCache lock
		defer coll.Unlock()
		for i := 1; i < len(p); i++ {
			for j := i; j > 0 && coll.CompareStrings(getString(p[j]), getString(p[j-1])) < 0; j-- {
				p[j], p[j-1] = p[j-1], p[j]
			}
		}
	}
}

func collatorStringLess(p Page) (less func(s1, s2 string) bool, close func()) {
	currentSite := p.Site().Current()
	coll := currentSite.Language().Collator()
	coll.Lock()
	return func(s1, s2 string) bool { return coll.CompareStrings(s1, s2) < 1 },
		func() { coll.Unlock() }
}

func (p Pages) ByTitle() Pages {
	const key = "pageSort.ByTitle"
	pages, _ := spc.get(key, collatorStringSort(func(p Page) string { return p.Title() }), p)
	return pages
}

func (p Pages) ByParam(paramsKey any) Pages {
	paramsKeyStr := fmt.Sprint(paramsKey)
	key := "pageSort.ByParam." + paramsKeyStr

	stringLess, close := collatorStringLess(p[0])
	defer close()

	sortByParam := func(ps Pages) {
		for i := 1; i < len(ps); i++ {
			for j := i; j > 0; j-- {
				v1, _ := ps[j].Param(paramsKeyStr)
				if v2, _ := ps[j-1].Param(paramsKeyStr); !stringLess(fmt.Sprint(v1), fmt.Sprint(v2)) {
					break
				}
				ps[j], ps[j-1] = ps[j-1], ps[j]
			}
		}
	}

	time.Sleep(100 * time.Millisecond) // widen the window: ByTitle now holds spc
	pages, _ := spc.get(key, sortByParam, p)
	return pages
}

func main() {
	site := &Site{language: &Language{collator1: &Collator{}, collator2: &Collator{}}}
	var pages Pages
	for i, t := range []string{"c", "a", "b"} {
		pages = append(pages, &pageState{title: t, rank: fmt.Sprint(3 - i), s: site})
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // {{ range .Pages.ByParam "rank" }}
		defer wg.Done()
		fmt.Println("ByParam:", len(pages.ByParam("rank")))
	}()
	go func() { // {{ range .Pages.ByTitle }}
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		fmt.Println("ByTitle:", len(pages.ByTitle()))
	}()
	wg.Wait()
	fmt.Println("done")
}
