// Modelled on HashiCorp Vault's logical Router (vault/router.go): the router
// lock is always taken before a mount entry's lock. Requests reach the entry
// through the Backend interface while the router read lock is held, and the
// taint hook installed with SetTaintHook also runs under the router lock.

package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

type Request struct {
	Path      string
	Operation string
}

type Backend interface {
	HandleRequest(req *Request) (string, error) // may lock the entry
}

type routeEntry struct {
	mountPath string // immutable

	l       sync.RWMutex
	tainted bool
	hits    int
	data    map[string]string
}

func (re *routeEntry) HandleRequest(req *Request) (string, error) {
	re.l.Lock()
	defer re.l.Unlock()
	if re.tainted {
		return "", errors.New("mount is being unmounted: " + re.mountPath)
	}
	re.hits++
	key := strings.TrimPrefix(req.Path, re.mountPath)
	if req.Operation == "write" {
		re.data[key] = fmt.Sprintf("v%d", re.hits)
	}
	return re.data[key], nil
}

type Router struct {
	l         sync.RWMutex
	mounts    map[string]Backend
	entries   map[string]*routeEntry
	taintHook func(re *routeEntry) // called with r.l held for writing
}

func NewRouter() *Router {
	return &Router{mounts: make(map[string]Backend), entries: make(map[string]*routeEntry)}
}

func (r *Router) SetTaintHook(fn func(re *routeEntry)) {
	r.l.Lock()
	r.taintHook = fn
	r.l.Unlock()
}

func (r *Router) Mount(path string) {
	re := &routeEntry{mountPath: path, data: make(map[string]string)}
	r.l.Lock()
	r.mounts[path] = re
	r.entries[path] = re
	r.l.Unlock()
}

// Route: r.l (read) -> entry.l via the Backend interface.
func (r *Router) Route(req *Request) (string, error) {
	r.l.RLock()
	defer r.l.RUnlock()
	for prefix, be := range r.mounts {
		if strings.HasPrefix(req.Path, prefix) {
			return be.HandleRequest(req)
		}
	}
	return "", fmt.Errorf("no handler for route %q", req.Path)
}

// Taint: r.l (write) -> entry.l via the stored hook.
func (r *Router) Taint(path string) {
	r.l.Lock()
	defer r.l.Unlock()
	re, ok := r.entries[path]
	if !ok {
		return
	}
	if r.taintHook != nil {
		r.taintHook(re)
	}
}

// Hits: r.l (read) -> entry.l (read), same order again.
func (r *Router) Hits() map[string]int {
	r.l.RLock()
	defer r.l.RUnlock()
	out := make(map[string]int, len(r.entries))
	for p, re := range r.entries {
		re.l.RLock()
		out[p] = re.hits
		re.l.RUnlock()
	}
	return out
}

func main() {
	r := NewRouter()
	r.SetTaintHook(func(re *routeEntry) {
		re.l.Lock()
		re.tainted = true
		re.l.Unlock()
	})
	mounts := []string{"secret/", "pki/", "transit/"}
	for _, m := range mounts {
		r.Mount(m)
	}

	var wg sync.WaitGroup
	var errMu sync.Mutex
	rejected := 0
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				op := "read"
				if i%3 == 0 {
					op = "write"
				}
				_, err := r.Route(&Request{Path: mounts[(c+i)%len(mounts)] + "app/db", Operation: op})
				if err != nil {
					errMu.Lock()
					rejected++
					errMu.Unlock()
				}
			}
		}(c)
	}
	wg.Add(2)
	go func() { defer wg.Done(); r.Taint("transit/") }()
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			_ = r.Hits()
		}
	}()
	wg.Wait()

	fmt.Printf("hits=%v rejected=%d\n", r.Hits(), rejected)
}
