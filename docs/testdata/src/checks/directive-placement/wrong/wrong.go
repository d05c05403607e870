package wrong

import "sync"

type Cache struct {
	mu sync.Mutex
	m  map[string]int
}

// example:start

//confined:guardedby mu // want `//confined:guardedby is not allowed on func \(\*Cache\)\.get; it belongs on a struct field or a package-level var \(on a func, use //confined:requires\) \[directive-placement\]`
func (c *Cache) get(k string) int { return c.m[k] }

// example:end
