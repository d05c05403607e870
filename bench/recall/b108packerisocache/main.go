// Project: hashicorp/packer (common/step_download.go, packer/cache.go), 1.1.3 to 1.2.3, 2018.
// Bug: StepDownload.Run takes the per-key cache lock for every entry of iso_urls inside a for loop and releases it with a defer, so all locks stay held until Run returns. When two iso_urls resolve to the same URL (user variables expanding to the same mirror) the second iteration calls FileCache.Lock on the same per-key RWMutex the first iteration still holds and the build hangs forever (issue #6304).
package main

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"log"
	"path/filepath"
	"sync"
)

// ---- packer/cache.go ----

// Cache is the interface builders use to coordinate downloads into the
// shared packer_cache directory.
type Cache interface {
	Lock(string) string
	Unlock(string)
	RLock(string) (string, bool)
	RUnlock(string)
}

// FileCache implements Cache by caching the data directly to disk, with one
// RWMutex per hashed key.
type FileCache struct {
	CacheDir string
	l        sync.Mutex
	rw       map[string]*sync.RWMutex
}

func (f *FileCache) Lock(key string) string {
	hashKey := f.hashKey(key)
	rw := f.rwLock(hashKey)
	rw.Lock()
	return f.cachePath(key, hashKey)
}

func (f *FileCache) Unlock(key string) {
	f.rwLock(f.hashKey(key)).Unlock()
}

func (f *FileCache) RLock(key string) (string, bool) {
	hashKey := f.hashKey(key)
	f.rwLock(hashKey).RLock()
	return f.cachePath(key, hashKey), true
}

func (f *FileCache) RUnlock(key string) {
	f.rwLock(f.hashKey(key)).RUnlock()
}

func (f *FileCache) cachePath(key string, hashKey string) string {
	return filepath.Join(f.CacheDir, hashKey+filepath.Ext(key))
}

func (f *FileCache) hashKey(key string) string {
	sha := sha1.New()
	sha.Write([]byte(key))
	return hex.EncodeToString(sha.Sum(nil))
}

func (f *FileCache) rwLock(hashKey string) *sync.RWMutex {
	f.l.Lock()
	defer f.l.Unlock()
	if f.rw == nil {
		f.rw = make(map[string]*sync.RWMutex)
	}
	if result, ok := f.rw[hashKey]; ok {
		return result
	}
	result := new(sync.RWMutex)
	f.rw[hashKey] = result
	return result
}

// ---- multistep / packer.Ui ----

type StateBag map[string]interface{}

func (s StateBag) Get(k string) interface{}    { return s[k] }
func (s StateBag) Put(k string, v interface{}) { s[k] = v }

type StepAction int

const (
	ActionContinue StepAction = iota
	ActionHalt
)

type Ui interface {
	Say(string)
	Message(string)
}

type basicUi struct{}

func (basicUi) Say(m string)     { log.Printf("==> %s", m) }
func (basicUi) Message(m string) { log.Printf("    %s", m) }

// ---- common/download.go ----

type DownloadConfig struct {
	Url        string
	TargetPath string
	Checksum   string
}

type DownloadClient struct{ config *DownloadConfig }

func NewDownloadClient(c *DownloadConfig) *DownloadClient { return &DownloadClient{config: c} }

// VerifyChecksum reports whether an already downloaded file matches.
func (d *DownloadClient) VerifyChecksum(path string) (bool, error) {
	return false, fmt.Errorf("open %s: no such file or directory", path)
}

// ---- common/step_download.go ----

type StepDownload struct {
	Checksum    string
	Description string
	Extension   string
	ResultKey   string
	TargetPath  string
	Url         []string
}

func (s *StepDownload) Run(state StateBag) StepAction {
	cache := state.Get("cache").(Cache)
	ui := state.Get("ui").(Ui)
	ui.Say(fmt.Sprintf("Retrieving %s", s.Description))

	// First try to use any already downloaded file.
	downloadConfigs := make([]*DownloadConfig, len(s.Url))
	var finalPath string
	for i, url := range s.Url {
		targetPath := s.TargetPath
		if targetPath == "" {
			cacheKey := url
			if s.Extension != "" {
				hash := sha1.Sum([]byte(url))
				cacheKey = fmt.Sprintf("%s.%s", hex.EncodeToString(hash[:]), s.Extension)
			}
			log.Printf("Acquiring lock to download: %s", url)
			targetPath = cache.Lock(cacheKey)
			defer cache.Unlock(cacheKey)
		}
		config := &DownloadConfig{Url: url, TargetPath: targetPath, Checksum: s.Checksum}
		downloadConfigs[i] = config
		if match, _ := NewDownloadClient(config).VerifyChecksum(config.TargetPath); match {
			ui.Message(fmt.Sprintf("Found already downloaded: %s", url))
			finalPath = config.TargetPath
			break
		}
	}

	if finalPath == "" {
		for _, config := range downloadConfigs {
			ui.Message(fmt.Sprintf("Downloading %s", config.Url))
			finalPath = config.TargetPath
			break
		}
	}
	state.Put(s.ResultKey, finalPath)
	return ActionContinue
}

func main() {
	// iso_url defaults to the mirror, and the var-file sets mirror,
	// mirror_directory and iso_name so that the second entry expands to the
	// very same URL.
	mirror := "http://releases.ubuntu.com/16.04"
	isoURLs := []string{
		mirror + "/ubuntu-16.04.4-server-amd64.iso",
		fmt.Sprintf("%s/%s", mirror, "ubuntu-16.04.4-server-amd64.iso"),
	}
	state := StateBag{"cache": &FileCache{CacheDir: "packer_cache"}, "ui": basicUi{}}
	step := &StepDownload{
		Checksum:    "a06cd926f5855d4f21fb4bc9978a35312f815fbda0d0ef7fdc846861f4fc4600",
		Description: "ISO",
		Extension:   "iso",
		ResultKey:   "iso_path",
		Url:         isoURLs,
	}
	done := make(chan StepAction)
	go func() { done <- step.Run(state) }()
	action := <-done
	fmt.Println("step finished:", action, state.Get("iso_path"))
}
