// Project: Hugo (tpl/data/resources.go, getJSON/getCSV remote fetching)
// Bug: remoteLock.URLLock takes the global l.Lock() and, while still holding
//
//	it, blocks on the per-URL mutex l.m[url].Lock(). The goroutine that
//	currently owns the per-URL mutex finishes its download and calls
//	URLUnlock, which needs l.RLock() to look the URL up. Order is
//	global->url in URLLock but url->global in URLUnlock: two templates
//	calling getJSON on the same URL concurrently hang the build.
//
// Upstream fix: gohugoio/hugo#3251 (as recalled; GoBench hugo3251): release
//
//	the global lock before locking the per-URL mutex.
package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

type remoteLock struct {
	sync.RWMutex
	m map[string]*sync.Mutex
}

var remoteURLLock = &remoteLock{m: make(map[string]*sync.Mutex)}

// URLLock locks an URL during download.
func (l *remoteLock) URLLock(url string) {
	l.Lock()
	if _, ok := l.m[url]; !ok {
		l.m[url] = &sync.Mutex{}
	}
	l.m[url].Lock() // DEADLOCK HERE
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

type fileCache struct {
	mu    sync.Mutex
	items map[string][]byte
}

func (c *fileCache) get(id string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.items[id]
	return b, ok
}

func (c *fileCache) set(id string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[id] = b
}

var cache = &fileCache{items: map[string][]byte{}}

// resGetRemote loads the content of a remote file. Only one download per URL
// is allowed at a time; the others wait and then hit the cache.
func resGetRemote(url string) ([]byte, error) {
	if c, ok := cache.get(url); ok {
		return c, nil
	}
	remoteURLLock.URLLock(url)
	defer func() { remoteURLLock.URLUnlock(url) }()

	if c, ok := cache.get(url); ok {
		return c, nil
	}
	time.Sleep(30 * time.Millisecond) // http.Get(url)
	body := []byte(`{"title":"remote","count":3}`)
	cache.set(url, body)
	return body, nil
}

// GetJSON is the template func getJSON.
func GetJSON(url string) interface{} {
	c, err := resGetRemote(url)
	if err != nil {
		return nil
	}
	var v interface{}
	if err := json.Unmarshal(c, &v); err != nil {
		return nil
	}
	return v
}

func main() {
	const url = "https://api.example.com/data.json"
	pages := []string{"/posts/a/", "/posts/b/", "/posts/c/"}
	var wg sync.WaitGroup
	for i, p := range pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 5 * time.Millisecond)
			fmt.Println(p, GetJSON(url))
		}()
	}
	wg.Wait()
}
