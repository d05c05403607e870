// Style: like a koanf/viper config tree with alias resolution. All writes
// (Set) happen during loading, before any reader goroutine starts; afterwards
// the tree is read-only, so Get -> resolve -> Get taking RLock recursively can
// never be blocked by a pending writer.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type Config struct {
	mu     sync.RWMutex
	values map[string]string
}

func (c *Config) Set(key, val string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values[key] = val
}

// Get resolves "${other.key}" references by recursively calling resolve,
// which calls back into Get while the read lock is still held.
func (c *Config) Get(key string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.resolve(c.values[key], 0)
}

func (c *Config) resolve(v string, depth int) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if depth > 8 {
		return v
	}
	start := strings.Index(v, "${")
	if start < 0 {
		return v
	}
	end := strings.Index(v[start:], "}")
	if end < 0 {
		return v
	}
	ref := v[start+2 : start+end]
	return v[:start] + c.Get(ref) + c.resolve(v[start+end+1:], depth+1)
}

func load() *Config {
	c := &Config{values: make(map[string]string)}
	c.Set("cluster.name", "prod-eu")
	c.Set("cluster.domain", "${cluster.name}.example.com")
	c.Set("api.url", "https://api.${cluster.domain}:${api.port}/v1")
	c.Set("api.port", "8443")
	c.Set("metrics.url", "${api.url}/metrics")
	return c
}

func main() {
	cfg := load() // all writers finish here
	keys := []string{"cluster.domain", "api.url", "metrics.url"}
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				results[i] = cfg.Get(keys[(i+j)%len(keys)])
			}
		}(i)
	}
	wg.Wait()
	fmt.Println(cfg.Get("metrics.url"))
}
