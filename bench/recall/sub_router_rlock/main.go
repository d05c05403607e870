// Pattern: HashiCorp Vault vault/router.go Router (mount table behind a
// sync.RWMutex, request path resolved under RLock): here the mount table and
// listener map are frozen at construction, so the RWMutex is only ever
// read-locked. Route sends to listeners while holding RLock and listeners call
// MatchingMount (RLock) while handling; with no writer, RLock never blocks.
package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

type Request struct {
	ID   int
	Path string
}

type Router struct {
	l         sync.RWMutex
	mounts    map[string]string // path prefix -> backend name
	listeners map[string]chan<- Request
	audit     []chan<- Request
}

func NewRouter(mounts map[string]string, listeners map[string]chan<- Request, audit []chan<- Request) *Router {
	return &Router{mounts: mounts, listeners: listeners, audit: audit}
}

func (r *Router) matchLocked(path string) string {
	best := ""
	for prefix := range r.mounts {
		if strings.HasPrefix(path, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	return best
}

func (r *Router) MatchingMount(path string) string {
	r.l.RLock()
	defer r.l.RUnlock()
	return r.matchLocked(path)
}

func (r *Router) Backend(prefix string) string {
	r.l.RLock()
	defer r.l.RUnlock()
	return r.mounts[prefix]
}

// Route delivers req to its backend and to every audit device.
func (r *Router) Route(req Request) bool {
	r.l.RLock()
	defer r.l.RUnlock()
	prefix := r.matchLocked(req.Path)
	ch, ok := r.listeners[r.mounts[prefix]]
	if !ok {
		return false
	}
	for _, a := range r.audit {
		a <- req
	}
	ch <- req
	return true
}

func main() {
	backends := map[string]chan Request{"kv": make(chan Request), "pki": make(chan Request), "transit": make(chan Request)}
	audits := []chan Request{make(chan Request), make(chan Request)}
	listeners := map[string]chan<- Request{}
	for name, ch := range backends {
		listeners[name] = ch
	}
	var auditSend []chan<- Request
	for _, a := range audits {
		auditSend = append(auditSend, a)
	}
	r := NewRouter(map[string]string{"secret/": "kv", "pki/": "pki", "transit/": "transit", "secret/team/": "kv"}, listeners, auditSend)

	var consumers sync.WaitGroup
	var statsMu sync.Mutex
	handled := map[string]int{}
	consume := func(name string, ch <-chan Request) {
		defer consumers.Done()
		for req := range ch {
			mount := r.MatchingMount(req.Path) // RLock while Route holds RLock
			be := r.Backend(mount)
			statsMu.Lock()
			handled[name+"<-"+be]++
			statsMu.Unlock()
		}
	}
	for name, ch := range backends {
		consumers.Add(1)
		go consume(name, ch)
	}
	for i, a := range audits {
		consumers.Add(1)
		go consume(fmt.Sprintf("audit%d", i), a)
	}

	paths := []string{"secret/app/db", "pki/issue/web", "transit/encrypt/k1", "secret/team/x", "sys/health"}
	var clients sync.WaitGroup
	for c := 0; c < 3; c++ {
		clients.Add(1)
		go func(c int) {
			defer clients.Done()
			for i := 0; i < 20; i++ {
				r.Route(Request{ID: c*100 + i, Path: paths[(c+i)%len(paths)]})
			}
		}(c)
	}
	clients.Wait()
	for _, ch := range backends {
		close(ch)
	}
	for _, a := range audits {
		close(a)
	}
	consumers.Wait()

	keys := make([]string, 0, len(handled))
	for k := range handled {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Println(k, handled[k])
	}
}
