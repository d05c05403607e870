// Package vartable: function literals in a package-level table (a
// registry of settings with their validation hooks) run as much as any
// declared function. A hook that ends up rebuilding the cache whose
// rebuild runs the hooks locks the rebuild lock again.
package vartable

import "sync"

type setting struct {
	name     string
	validate func(s store, v string) string
}

// store is how hooks write settings back (an interface, as a package
// var's initializer may not refer to the functions that read the var).
type store interface{ set(name, v string) }

var settings = []*setting{
	{name: "length"},
	{name: "digits", validate: func(st store, v string) string {
		st.set("length", v) // a rule that raises another setting
		return v
	}},
}

type format struct {
	name  string
	check func(v string) string
}

var formats = []*format{
	{name: "width", check: func(v string) string {
		if v == "" {
			return "0"
		}
		return v
	}},
}

type cache struct {
	rebuildMu sync.Mutex
	values    map[string]string
	stored    map[string]string
}

func (c *cache) rebuild() {
	c.rebuildMu.Lock()
	defer c.rebuildMu.Unlock()
	for _, s := range settings {
		v := c.stored[s.name]
		if s.validate != nil {
			v = s.validate(c, v) // want `cache.rebuildMu locked again by init.func1 -> cache.set -> cache.rebuild \(at vartable.go:\d+\) while held since vartable.go:\d+: self-deadlock \[double-lock\]`
		}
		c.values[s.name] = v
	}
}

func (c *cache) set(name, v string) {
	c.stored[name] = v
	c.rebuild()
}

// The hooks of this table only compute. Silent.
func (c *cache) rebuildQuiet() {
	c.rebuildMu.Lock()
	defer c.rebuildMu.Unlock()
	for _, f := range formats {
		c.values[f.name] = f.check(c.stored[f.name])
	}
}
