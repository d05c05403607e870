// Project: rclone/rclone (fs/cache/cache.go GetFn, used by cmd.NewFsSrc for mount/serve and by wrapping backends such as alias and crypt), 2019-2020 (approximate).
// Bug: GetFn held fsCacheMu for the whole lookup, including the call to the create function (fs.NewFs); a wrapping
// backend's NewFs (alias here) resolves its wrapped remote through cache.Get again, so mounting an alias remote
// re-locks fsCacheMu on the same goroutine and hangs. The fix drops the lock around create
// ("Unlock in case Get is called recursively") and re-takes it to store the entry.
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ---- fs ----

type Fs interface {
	Name() string
	Root() string
}

type RegInfo struct {
	Name  string
	NewFs func(name, root string, m map[string]string) (Fs, error)
}

var (
	fsRegistry  []*RegInfo
	configFile  = map[string]map[string]string{}
	ErrorIsFile = errors.New("is a file not a directory")
)

func Register(info *RegInfo) { fsRegistry = append(fsRegistry, info) }

// NewFs makes a new Fs object from the path "remote:path"
func NewFs(path string) (Fs, error) {
	i := strings.IndexByte(path, ':')
	configName, fsPath := path[:i], path[i+1:]
	m := configFile[configName]
	for _, info := range fsRegistry {
		if info.Name == m["type"] {
			return info.NewFs(configName, fsPath, m)
		}
	}
	return nil, fmt.Errorf("didn't find section in config file %q", configName)
}

// ---- fs/cache ----

type cacheEntry struct {
	f        Fs        // cached f
	err      error     // nil or ErrorIsFile
	fsString string    // remote string
	lastUsed time.Time // time used for expiry
}

var (
	fsCacheMu           sync.Mutex
	fsCache             = map[string]*cacheEntry{}
	fsNewFs             = NewFs // for tests
	expireRunning       = false
	cacheExpireDuration = 300 * time.Second // expire the cache entry when it is older than this
	cacheExpireInterval = 60 * time.Second  // interval to run the cache expire
)

// GetFn gets a Fs named fsString either from the cache or creating it afresh with the create function
func GetFn(fsString string, create func(fsString string) (Fs, error)) (f Fs, err error) {
	fsCacheMu.Lock()
	entry, ok := fsCache[fsString]
	if !ok {
		fsCacheMu.Unlock() // Unlock in case Get is called recursively
		f, err = create(fsString)
		if err != nil && err != ErrorIsFile {
			return f, err
		}
		entry = &cacheEntry{
			f:        f,
			fsString: fsString,
			err:      err,
		}
		fsCacheMu.Lock()
		fsCache[fsString] = entry
	}
	defer fsCacheMu.Unlock()
	entry.lastUsed = time.Now()
	if !expireRunning {
		time.AfterFunc(cacheExpireInterval, cacheExpire)
		expireRunning = true
	}
	return entry.f, entry.err
}

// Get gets a Fs named fsString either from the cache or creating it afresh
func Get(fsString string) (f Fs, err error) { return GetFn(fsString, fsNewFs) }

func cacheExpire() {
	fsCacheMu.Lock()
	defer fsCacheMu.Unlock()
	now := time.Now()
	for fsString, entry := range fsCache {
		if now.Sub(entry.lastUsed) > cacheExpireDuration {
			delete(fsCache, fsString)
		}
	}
	if len(fsCache) != 0 {
		time.AfterFunc(cacheExpireInterval, cacheExpire)
		expireRunning = true
	} else {
		expireRunning = false
	}
}

// ---- backend/local and backend/alias ----

type localFs struct{ name, root string }

func (f *localFs) Name() string { return f.name }
func (f *localFs) Root() string { return f.root }

func init() {
	Register(&RegInfo{Name: "local", NewFs: func(name, root string, m map[string]string) (Fs, error) {
		return &localFs{name: name, root: root}, nil
	}})
	Register(&RegInfo{Name: "alias", NewFs: func(name, root string, m map[string]string) (Fs, error) {
		remote := m["remote"]
		if remote == "" {
			return nil, errors.New("alias can't point to an empty remote - check the value of the remote setting")
		}
		if strings.HasPrefix(remote, name+":") {
			return nil, errors.New("can't point alias remote at itself - check the value of the remote setting")
		}
		return Get(strings.TrimRight(remote, "/") + "/" + root)
	}})
}

// ---- cmd (NewFsSrc used by "rclone mount") and vfs ----

type VFS struct{ f Fs }

func NewFsSrc(remote string) Fs {
	f, err := Get(remote)
	if err != nil && err != ErrorIsFile {
		panic(err)
	}
	return f
}

func main() {
	configFile["disk"] = map[string]string{"type": "local"}
	configFile["media"] = map[string]string{"type": "alias", "remote": "disk:/srv/media"}
	// rclone mount media:films /mnt/films
	v := &VFS{f: NewFsSrc("media:films")}
	fmt.Println("mounted", v.f.Name(), v.f.Root())
}
