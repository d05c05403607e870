// Project: helm/helm (pkg/storage/driver, in-memory driver)
// Bug: Memory.Query takes the driver read lock (mem.rlock()) and, for the
//      name fast-path, delegates to mem.List, which takes mem.rlock() again.
//      If a concurrent Create/Update asks for mem.wlock() between the two
//      RLocks, the second RLock queues behind the pending writer while the
//      writer waits for the first RLock to be released.
// Fix: Query and List share an unexported list helper that assumes the lock is
//      already held, so the read lock is taken exactly once per call.

package b22helmmemory_fixed

import (
	"errors"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

var ErrReleaseNotFound = errors.New("release: not found")

type Release struct {
	Name      string
	Namespace string
	Version   int
	Labels    map[string]string
}

type memReleases map[string]*Release

type Memory struct {
	sync.RWMutex
	namespace string
	cache     map[string]memReleases
	Log       func(string, ...interface{})
}

func NewMemory() *Memory {
	return &Memory{cache: map[string]memReleases{}, namespace: "default", Log: func(string, ...interface{}) {}}
}

func (mem *Memory) Name() string { return "Memory" }

func (mem *Memory) SetNamespace(ns string) { mem.namespace = ns }

func (mem *Memory) wlock() func() {
	mem.Lock()
	return func() { mem.Unlock() }
}

func (mem *Memory) rlock() func() {
	mem.RLock()
	return func() { mem.RUnlock() }
}

func unlock(fn func()) { fn() }

func (mem *Memory) Get(key string) (*Release, error) {
	defer unlock(mem.rlock())
	if rls, ok := mem.cache[mem.namespace][key]; ok {
		return rls, nil
	}
	return nil, ErrReleaseNotFound
}

func (mem *Memory) List(filter func(*Release) bool) ([]*Release, error) {
	defer unlock(mem.rlock())
	return mem.list(filter)
}

// list must be called with mem's read or write lock held.
func (mem *Memory) list(filter func(*Release) bool) ([]*Release, error) {
	var ls []*Release
	for _, rls := range mem.cache[mem.namespace] {
		if filter(rls) {
			ls = append(ls, rls)
		}
	}
	return ls, nil
}

func matchLabels(want, have map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func (mem *Memory) Query(keyvals map[string]string) ([]*Release, error) {
	defer unlock(mem.rlock())
	mem.Log("query: namespace=%s labels=%v", mem.namespace, keyvals)

	var ls []*Release
	if name, ok := keyvals["name"]; ok {
		var err error
		ls, err = mem.list(func(r *Release) bool {
			return r.Name == name && matchLabels(keyvals, r.Labels)
		})
		if err != nil {
			return nil, err
		}
	} else {
		for _, rls := range mem.cache[mem.namespace] {
			if matchLabels(keyvals, rls.Labels) {
				ls = append(ls, rls)
			}
		}
	}
	if len(ls) == 0 {
		return nil, ErrReleaseNotFound
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].Version < ls[j].Version })
	return ls, nil
}

func (mem *Memory) Create(key string, rls *Release) error {
	defer unlock(mem.wlock())
	ns := rls.Namespace
	if ns == "" {
		ns = mem.namespace
	}
	if mem.cache[ns] == nil {
		mem.cache[ns] = memReleases{}
	}
	if _, ok := mem.cache[ns][key]; ok {
		return errors.New("release: already exists")
	}
	mem.cache[ns][key] = rls
	return nil
}

func makeKey(name string, version int) string {
	return "sh.helm.release.v1." + name + ".v" + strconv.Itoa(version)
}

func TestProbe(t *testing.T) {
	mem := NewMemory()
	for v := 1; v <= 2; v++ {
		r := &Release{Name: "nginx", Namespace: "default", Version: v,
			Labels: map[string]string{"name": "nginx", "owner": "helm", "status": "superseded"}}
		if err := mem.Create(makeKey("nginx", v), r); err != nil {
			t.Fatal(err)
		}
	}

	querying := make(chan struct{})
	var once sync.Once
	mem.Log = func(format string, args ...interface{}) {
		once.Do(func() { close(querying) })
		time.Sleep(50 * time.Millisecond)
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if _, err := mem.Query(map[string]string{"name": "nginx", "owner": "helm"}); err != nil {
			t.Errorf("history: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		<-querying
		r := &Release{Name: "nginx", Namespace: "default", Version: 3,
			Labels: map[string]string{"name": "nginx", "owner": "helm", "status": "pending-upgrade"}}
		if err := mem.Create(makeKey("nginx", 3), r); err != nil {
			t.Errorf("create: %v", err)
		}
	}()
	wg.Wait()
}
