package objects

import (
	"runtime"
	"sync"
	"weak"

	"golang.org/x/tools/go/ssa"
)

// pkgCache memoizes answers per SSA package without keeping the package
// alive: golangci-lint and the in-process driver analyse many packages in
// one process, and a global map holding their functions would hold all
// their SSA. The entry goes when the package is collected; keys and
// values must not point back into SSA (use types objects or positions).
type pkgCache[K comparable, V any] struct {
	m sync.Map // weak.Pointer[ssa.Package] -> *sync.Map (K -> V)
}

func (c *pkgCache[K, V]) inner(pkg *ssa.Package) *sync.Map {
	wk := weak.Make(pkg)
	if m, ok := c.m.Load(wk); ok {
		return m.(*sync.Map)
	}
	m, loaded := c.m.LoadOrStore(wk, &sync.Map{})
	if !loaded {
		runtime.AddCleanup(pkg, func(k weak.Pointer[ssa.Package]) { c.m.Delete(k) }, wk)
	}
	return m.(*sync.Map)
}

func (c *pkgCache[K, V]) load(pkg *ssa.Package, k K) (V, bool) {
	v, ok := c.inner(pkg).Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (c *pkgCache[K, V]) store(pkg *ssa.Package, k K, v V) {
	c.inner(pkg).Store(k, v)
}
