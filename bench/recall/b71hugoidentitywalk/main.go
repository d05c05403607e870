// Hugo (gohugoio/hugo), issue #11988 "Investigate deadlock", fixed in
// commit 609d798e for v0.123.x. The exact interleaving is reconstructed.
//
// Hugo 0.123 tracks dependencies with identity.Manager values. Each page owns
// an identityManager whose ids map is guarded by an RWMutex. On a server
// rebuild, HugoSites.resolveAndClearStateForIdentities walks the changed
// identities with identity.WalkIdentitiesDeep, and walkIdentities descends into
// the dependency manager of every identity it meets through
// identityManager.forEeachIdentity, which read-locked im.mu for the whole
// iteration.
//
// A shortcode rendered inside a page shares the page's dependency manager, so
// the walk reaches the same identityManager twice: once for the page and once,
// nested inside the first iteration, for the shortcode. The nested
// forEeachIdentity takes a second read lock on im.mu while the first is still
// held. When a render goroutine calls AddIdentity on that manager in between,
// its Lock queues behind the first read lock and the nested RLock queues behind
// the writer: the rebuild and the renderer wait on each other forever.
//
// The fixed twin iterates over a snapshot of the ids taken under a short read
// lock, so the walk never holds im.mu while it recurses. Upstream dropped the
// lock from forEeachIdentity altogether.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Identity interface {
	IdentifierBase() string
}

type Manager interface {
	Identity
	AddIdentity(ids ...Identity)
	forEeachIdentity(fn func(id Identity) bool) bool
}

type DependencyManagerProvider interface {
	GetDependencyManager() Manager
}

type StringIdentity string

func (s StringIdentity) IdentifierBase() string { return string(s) }

type identityManager struct {
	Identity
	mu  sync.RWMutex
	ids map[Identity]bool
}

func NewManager(name string) Manager {
	return &identityManager{Identity: StringIdentity(name), ids: make(map[Identity]bool)}
}

func (im *identityManager) AddIdentity(ids ...Identity) {
	im.mu.Lock()
	for _, id := range ids {
		im.ids[id] = true
	}
	im.mu.Unlock()
}

func (im *identityManager) forEeachIdentity(fn func(id Identity) bool) bool {
	im.mu.RLock()
	defer im.mu.RUnlock()
	for id := range im.ids {
		if fn(id) {
			return true
		}
	}
	return false
}

func GetDependencyManager(v any) Manager {
	if p, ok := v.(DependencyManagerProvider); ok {
		return p.GetDependencyManager()
	}
	return nil
}

func WalkIdentitiesDeep(v any, cb func(level int, id Identity) bool) {
	seen := make(map[Identity]bool)
	walkIdentities(v, 0, true, seen, cb)
}

func walkIdentities(v any, level int, deep bool, seen map[Identity]bool, cb func(level int, id Identity) bool) bool {
	return walkIdentitiesShallow(v, level, func(level int, id Identity) bool {
		if seen[id] {
			return false
		}
		seen[id] = true
		if cb(level, id) {
			return true
		}
		if deep {
			if m := GetDependencyManager(id); m != nil {
				return m.forEeachIdentity(func(id2 Identity) bool {
					return walkIdentities(id2, level+1, deep, seen, cb)
				})
			}
		}
		return false
	})
}

func walkIdentitiesShallow(v any, level int, cb func(level int, id Identity) bool) bool {
	if id, ok := v.(Identity); ok {
		return cb(level, id)
	}
	return false
}

type pageState struct {
	path              string
	dependencyManager Manager
}

func (p *pageState) IdentifierBase() string              { return p.path }
func (p *pageState) GetDependencyManager() Manager       { return p.dependencyManager }
func (p *pageState) Render(deps ...Identity)             { p.dependencyManager.AddIdentity(deps...) }
func (p *pageState) newShortcode(name string) *shortcode { return &shortcode{name: name, p: p} }

type shortcode struct {
	name string
	p    *pageState
}

func (s *shortcode) IdentifierBase() string        { return "shortcode/" + s.name }
func (s *shortcode) GetDependencyManager() Manager { return s.p.dependencyManager }

type HugoSites struct {
	walking chan struct{}
}

func (h *HugoSites) resolveAndClearStateForIdentities(changes ...Identity) int {
	var n int
	for _, change := range changes {
		WalkIdentitiesDeep(change, func(level int, id Identity) bool {
			n++
			if level == 1 {
				close(h.walking)
				time.Sleep(50 * time.Millisecond)
			}
			return false
		})
	}
	return n
}

func main() {
	p := &pageState{path: "/posts/hello.md", dependencyManager: NewManager("/posts/hello.md")}
	p.Render(p.newShortcode("figure"))

	h := &HugoSites{walking: make(chan struct{})}
	go func() {
		<-h.walking
		p.Render(StringIdentity("layouts/_default/single.html"))
	}()

	n := h.resolveAndClearStateForIdentities(p)
	fmt.Println("rebuild walked", n, "identities")
}
