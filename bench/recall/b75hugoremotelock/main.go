// Project: gohugoio/hugo (tpl/template_resources.go, getJSON/getCSV), v0.19/v0.20, 2017 (issue #3251, approximate).
// Bug: remoteLock.URLLock holds the global remoteURLLock write lock while it blocks on the per-URL mutex, so a second page fetching the same URL blocks inside URLLock with the global lock held, and the first fetcher can never take the read lock in URLUnlock to release the per-URL mutex.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ---- config / afero stand-ins ----

type Provider interface{ GetBool(key string) bool }

type mapConfig map[string]bool

func (c mapConfig) GetBool(key string) bool { return c[key] }

type memFs struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (fs *memFs) ReadFile(name string) ([]byte, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	b, ok := fs.files[name]
	if !ok {
		return nil, errors.New("file does not exist")
	}
	return b, nil
}

func (fs *memFs) WriteFile(name string, b []byte) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.files[name] = b
	return nil
}

type httpGetter interface {
	Get(url string) ([]byte, error)
}

type slowRemote struct{}

func (slowRemote) Get(url string) ([]byte, error) {
	time.Sleep(100 * time.Millisecond) // network round trip
	return []byte(`{"url":"` + url + `","stars":42}`), nil
}

// ---- tpl/template_resources.go ----

var (
	remoteURLLock = &remoteLock{m: make(map[string]*sync.Mutex)}
	resRetries    = 1
)

type remoteLock struct {
	sync.RWMutex
	m map[string]*sync.Mutex
}

// URLLock locks an URL during download
func (l *remoteLock) URLLock(url string) {
	l.Lock()
	if _, ok := l.m[url]; !ok {
		l.m[url] = &sync.Mutex{}
	}
	l.m[url].Lock()
	l.Unlock()
}

// URLUnlock unlocks an URL when the download has been finished. Use only in defer calls.
func (l *remoteLock) URLUnlock(url string) {
	l.RLock()
	defer l.RUnlock()
	if um, ok := l.m[url]; ok {
		um.Unlock()
	}
}

func getCacheFileID(cfg Provider, id string) string {
	return "cache/" + strings.NewReplacer("/", "_", ":", "_").Replace(id)
}

// resGetCache returns the content for an ID from the file cache or an error
func resGetCache(id string, fs *memFs, cfg Provider, ignoreCache bool) ([]byte, error) {
	if ignoreCache {
		return nil, nil
	}
	b, err := fs.ReadFile(getCacheFileID(cfg, id))
	if err != nil {
		return nil, nil
	}
	return b, nil
}

func resWriteCache(id string, c []byte, fs *memFs, cfg Provider, ignoreCache bool) error {
	if ignoreCache {
		return nil
	}
	return fs.WriteFile(getCacheFileID(cfg, id), c)
}

// resGetRemote loads the content of a remote file. This method is thread safe.
func resGetRemote(url string, fs *memFs, cfg Provider, hc httpGetter) ([]byte, error) {
	c, err := resGetCache(url, fs, cfg, cfg.GetBool("ignoreCache"))
	if c != nil && err == nil {
		return c, nil
	}
	// avoid race condition with locks, block other goroutines if the current url is processing
	remoteURLLock.URLLock(url)
	defer func() { remoteURLLock.URLUnlock(url) }()

	// avoid multiple locks due to calling resGetCache twice
	c, err = resGetCache(url, fs, cfg, cfg.GetBool("ignoreCache"))
	if c != nil && err == nil {
		return c, nil
	}
	c, err = hc.Get(url)
	if err != nil {
		return nil, err
	}
	err = resWriteCache(url, c, fs, cfg, cfg.GetBool("ignoreCache"))
	return c, err
}

type templateFuncster struct {
	fs  *memFs
	cfg Provider
	hc  httpGetter
}

// resGetResource loads the content of a local or remote file
func (t *templateFuncster) resGetResource(url string) ([]byte, error) {
	if strings.Contains(url, "://") {
		return resGetRemote(url, t.fs, t.cfg, t.hc)
	}
	return t.fs.ReadFile(url)
}

// getJSON expects one or n-parts of a URL to a resource which can either be a local or a remote one.
func (t *templateFuncster) getJSON(urlParts ...string) interface{} {
	var v interface{}
	url := strings.Join(urlParts, "")
	for i := 0; i <= resRetries; i++ {
		c, err := t.resGetResource(url)
		if err != nil {
			continue
		}
		if err = json.Unmarshal(c, &v); err == nil {
			break
		}
	}
	return v
}

func main() {
	t := &templateFuncster{fs: &memFs{files: map[string][]byte{}}, cfg: mapConfig{"ignoreCache": false}, hc: slowRemote{}}
	var wg sync.WaitGroup
	// Two pages rendered in parallel both use {{ getJSON "https://api.github.com/repos/" .Params.repo }}.
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(page int) {
			defer wg.Done()
			time.Sleep(time.Duration(page) * 20 * time.Millisecond)
			fmt.Println("page", page, t.getJSON("https://api.github.com/repos/", "gohugoio/hugo"))
		}(i)
	}
	wg.Wait()
}
