// Pattern: Hugo hugolib content map (pageTrees / section nodes): Ancestors()
// reads the parent pointer under the tree's RLock, releases the lock, and only
// then recurses into the parent, so no lock is held across the walk.
package main

import (
	"fmt"
	"sync"
)

type ContentTree struct {
	mu    sync.RWMutex
	nodes map[string]*Section
}

type Section struct {
	tree     *ContentTree
	key      string
	title    string
	parent   *Section
	children []*Section
}

func (t *ContentTree) Insert(parentKey, key, title string) *Section {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &Section{tree: t, key: key, title: title, parent: t.nodes[parentKey]}
	if s.parent != nil {
		s.parent.children = append(s.parent.children, s)
	}
	t.nodes[key] = s
	return s
}

// Retitle takes the write lock; it races with Ancestors on other goroutines.
func (t *ContentTree) Retitle(key, title string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.nodes[key]; s != nil {
		s.title = title
	}
}

// Parent reads the link under RLock and returns with the lock released.
func (s *Section) Parent() *Section {
	s.tree.mu.RLock()
	p := s.parent
	s.tree.mu.RUnlock()
	return p
}

func (s *Section) Title() string {
	s.tree.mu.RLock()
	defer s.tree.mu.RUnlock()
	return s.title
}

// Ancestors: no lock is held when calling p.Ancestors(); each step locks
// and unlocks independently.
func (s *Section) Ancestors() []string {
	p := s.Parent()
	if p == nil {
		return nil
	}
	return append(p.Ancestors(), p.Title())
}

// CountPages: children slice is copied under RLock, the lock is dropped,
// then each child is visited.
func (s *Section) CountPages() int {
	s.tree.mu.RLock()
	kids := append([]*Section(nil), s.children...)
	s.tree.mu.RUnlock()
	n := 1
	for _, c := range kids {
		n += c.CountPages()
	}
	return n
}

func main() {
	t := &ContentTree{nodes: map[string]*Section{}}
	root := t.Insert("", "/", "Home")
	t.Insert("/", "/docs", "Docs")
	leaf := t.Insert("/docs", "/docs/guide", "Guide")
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				t.Retitle("/docs", fmt.Sprintf("Docs-%d-%d", w, i))
				if i%30 == 0 {
					t.Insert("/docs/guide", fmt.Sprintf("/docs/guide/p%d-%d", w, i), "Page")
				}
			}
		}(w)
	}
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				_ = leaf.Ancestors()
				_ = root.CountPages()
			}
		}()
	}
	wg.Wait()
	fmt.Println(len(leaf.Ancestors()), "ancestors;", root.CountPages(), "pages")
}
