package main

import (
	"fmt"
	"go/types"
	"os/exec"
	"strings"

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

// checkAsyncFlagListed is checkAsyncFlag for the go vet driver, which
// loads no package in this process: go list names every package of the
// build (as packages.Load would load them), and only the packages an
// entry may name are loaded, types from export data, so that the check
// costs what those packages weigh, not the whole tree.
func checkAsyncFlagListed(o *options, patterns []string) error {
	if !roots.Default.HasUserEntries() {
		return nil
	}
	args := append([]string{"list", "-e", "-deps", "-f={{.ImportPath}}"}, o.buildFlags()...)
	if o.tests {
		args = append(args, "-test")
	}
	out, err := exec.Command("go", append(args, patterns...)...).Output()
	if err != nil {
		return fmt.Errorf("go list: %v", err)
	}
	loaded := map[string]*types.Package{}
	var named []string
	for _, line := range strings.Fields(string(out)) {
		if strings.HasPrefix(line, "[") || loaded[line] != nil {
			continue // "p [q.test]" reads as "p", "[q.test]"
		}
		loaded[line] = types.NewPackage(line, "") // a name to suggest
		if roots.Default.MayName(line) {
			named = append(named, line)
		}
	}
	if len(named) > 0 {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, BuildFlags: o.buildFlags()}
		pkgs, err := packages.Load(cfg, named...)
		if err != nil {
			return err
		}
		for _, p := range pkgs {
			if p.Types != nil {
				loaded[p.PkgPath] = p.Types
			}
		}
	}
	return roots.Default.Check(loaded, false)
}
