// Project: flosch/pongo2
// Bug: TemplateSet.FromCache took the cache RWMutex for reading to look the
// template up and, on a miss, stored the freshly parsed template under the
// write lock while the read lock was still held (RLock -> Lock upgrade).
// Fix: release the read lock before taking the write lock and re-check the
// cache (double-checked insert); upstream simply uses one exclusive lock.
package b23pongo2cache

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"testing"
)

type Context map[string]any

type TemplateLoader interface {
	Abs(base, name string) string
	Get(path string) (io.Reader, error)
}

type MemoryLoader struct {
	files map[string]string
}

func (l *MemoryLoader) Abs(base, name string) string {
	if path.IsAbs(name) || base == "" {
		return path.Clean("/" + name)
	}
	return path.Join(path.Dir(base), name)
}

func (l *MemoryLoader) Get(p string) (io.Reader, error) {
	s, ok := l.files[p]
	if !ok {
		return nil, fmt.Errorf("template %q not found", p)
	}
	return strings.NewReader(s), nil
}

type Template struct {
	set  *TemplateSet
	name string
	tpl  string
}

func (tpl *Template) Execute(ctx Context) (string, error) {
	out := tpl.tpl
	for k, v := range ctx {
		out = strings.ReplaceAll(out, "{{ "+k+" }}", fmt.Sprint(v))
	}
	return out, nil
}

type TemplateSet struct {
	name          string
	loaders       []TemplateLoader
	Globals       Context
	Debug         bool
	bannedTags    map[string]bool
	bannedFilters map[string]bool

	templateCache      map[string]*Template
	templateCacheMutex sync.RWMutex
}

func NewSet(name string, loaders ...TemplateLoader) *TemplateSet {
	return &TemplateSet{
		name:          name,
		loaders:       loaders,
		Globals:       Context{},
		bannedTags:    map[string]bool{},
		bannedFilters: map[string]bool{},
		templateCache: map[string]*Template{},
	}
}

func (set *TemplateSet) resolveFilename(tpl *Template, filename string) string {
	base := ""
	if tpl != nil {
		base = tpl.name
	}
	return set.loaders[0].Abs(base, filename)
}

func (set *TemplateSet) FromFile(filename string) (*Template, error) {
	fd, err := set.loaders[0].Get(set.resolveFilename(nil, filename))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, fd); err != nil {
		return nil, err
	}
	return &Template{set: set, name: filename, tpl: buf.String()}, nil
}

func (set *TemplateSet) FromCache(filename string) (*Template, error) {
	if set.Debug {
		return set.FromFile(filename)
	}
	cleanedFilename := set.resolveFilename(nil, filename)

	set.templateCacheMutex.RLock()
	defer set.templateCacheMutex.RUnlock()
	if tpl, has := set.templateCache[cleanedFilename]; has {
		return tpl, nil
	}
	tpl, err := set.FromFile(cleanedFilename)
	if err != nil {
		return nil, err
	}
	set.templateCacheMutex.Lock()
	set.templateCache[cleanedFilename] = tpl
	set.templateCacheMutex.Unlock()
	return tpl, nil
}

func (set *TemplateSet) CleanCache(filenames ...string) {
	set.templateCacheMutex.Lock()
	defer set.templateCacheMutex.Unlock()
	if len(filenames) == 0 {
		set.templateCache = map[string]*Template{}
	}
	for _, filename := range filenames {
		delete(set.templateCache, set.resolveFilename(nil, filename))
	}
}

func TestProbe(t *testing.T) {
	loader := &MemoryLoader{files: map[string]string{
		"/index.html": "<h1>{{ title }}</h1>",
		"/base.html":  "<html>{{ body }}</html>",
	}}
	set := NewSet("default", loader)
	set.Globals["site"] = "docs"

	done := make(chan string)
	go func() {
		tpl, err := set.FromCache("index.html")
		if err != nil {
			t.Error(err)
			close(done)
			return
		}
		out, _ := tpl.Execute(Context{"title": "Hello"})
		done <- out
	}()
	t.Log(<-done)
	set.CleanCache()
}
