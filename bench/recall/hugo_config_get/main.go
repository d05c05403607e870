// hugo config/defaultConfigProvider.go: Get takes c.mu.RLock() and, when an
// intermediate section of a dotted key does not exist (e.g. "markup.highlight.style"
// without a [markup] section), returns nil without RUnlock. The next
// Set/Merge (c.mu.Lock) blocks forever. gohugoio/hugo#8791, fixed in #8793.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type Params map[string]interface{}

// defaultConfigProvider is a Provider backed by a map where all keys are lower case.
// All methods are thread safe.
type defaultConfigProvider struct {
	mu   sync.RWMutex
	root Params

	keyCache sync.Map
}

func (c *defaultConfigProvider) Get(k string) interface{} {
	if k == "" {
		return c.root
	}
	c.mu.RLock()
	key, m := c.getNestedKeyAndMap(strings.ToLower(k), false)
	if m == nil {
		return nil
	}
	v := m[key]
	c.mu.RUnlock()
	return v
}

func (c *defaultConfigProvider) GetString(k string) string {
	s, _ := c.Get(k).(string)
	return s
}

func (c *defaultConfigProvider) Set(k string, v interface{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key, m := c.getNestedKeyAndMap(strings.ToLower(k), true)
	m[key] = v
}

func (c *defaultConfigProvider) getNestedKeyAndMap(key string, create bool) (string, Params) {
	var parts []string
	if v, ok := c.keyCache.Load(key); ok {
		parts = v.([]string)
	} else {
		parts = strings.Split(key, ".")
		c.keyCache.Store(key, parts)
	}
	current := c.root
	for i := 0; i < len(parts)-1; i++ {
		next, found := current[parts[i]]
		if !found {
			if !create {
				return "", nil
			}
			next = make(Params)
			current[parts[i]] = next
		}
		current = next.(Params)
	}
	return parts[len(parts)-1], current
}

func main() {
	cfg := &defaultConfigProvider{root: Params{
		"title":  "My Blog",
		"params": Params{"author": "bep"},
	}}

	var wg sync.WaitGroup
	// Page renderers reading site config.
	for _, key := range []string{"title", "params.author", "markup.highlight.style"} {
		wg.Add(1)
		go func(key string) {
			defer wg.Done()
			fmt.Printf("%s = %q\n", key, cfg.GetString(key))
		}(key)
	}
	wg.Wait()

	// hugo server: config file changed, apply the new value.
	wg.Add(1)
	go func() {
		defer wg.Done()
		cfg.Set("params.author", "Bjørn Erik")
	}()
	wg.Wait()
	fmt.Println("params.author =", cfg.GetString("params.author"))
}
