package main

import (
	"go/types"

	"golang.org/x/tools/go/packages"

	"github.com/confinelint/confinelint/internal/roots"
)

// checkAsyncFlag resolves every -confined.async entry against all loaded
// packages, dependencies included, before anything is analysed: an entry
// that names no function (a typo, a package not in the build) is an error
// naming the closest match, not a silent no-op.
func checkAsyncFlag(pkgs []*packages.Package) error {
	if !roots.Default.HasUserEntries() {
		return nil
	}
	loaded := map[string]*types.Package{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.Types != nil {
			loaded[p.PkgPath] = p.Types
		}
	})
	return roots.Default.Check(loaded, false)
}
