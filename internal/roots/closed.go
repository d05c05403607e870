package roots

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/program"
)

// closedWorld describes p to the object index when nothing can import
// it: package main, or a package all of whose files are _test.go files
// (an external test package, or a test variant with no library code).
// Then what runs once is known: func main, init functions and each Test
// or Example function (a benchmark or fuzz target runs many times).
func closedWorld(p *program.Package) *objects.ClosedWorld {
	if !closedPackage(p) {
		return nil
	}
	typeArgs := map[*types.Named]bool{}
	for _, inst := range p.Pass.TypesInfo.Instances {
		for t := range inst.TypeArgs.Types() {
			markNamed(t, typeArgs)
		}
	}
	main := p.Pass.Pkg.Name() == "main"
	return &objects.ClosedWorld{
		Pkg:  p.Pass.Pkg,
		Init: p.SSA.Pkg.Func("init"),
		RunsOnce: func(fn *ssa.Function) bool {
			if fn.Parent() != nil || fn.Signature.Recv() != nil {
				return false
			}
			if main && fn.Name() == "main" || strings.HasPrefix(fn.Name(), "init#") || fn.Name() == "init" {
				return true
			}
			return TestFunc(p.Pass.Fset, fn) && (testName(fn.Name(), "Test") || testName(fn.Name(), "Example"))
		},
		TypeArg: func(n *types.Named) bool { return typeArgs[n] },
	}
}

// closedPackage reports whether no other package can import p.
func closedPackage(p *program.Package) bool {
	if p.Pass.Pkg.Name() == "main" {
		return true
	}
	for _, f := range p.Pass.Files {
		if tf := p.Pass.Fset.File(f.Pos()); tf == nil || !strings.HasSuffix(tf.Name(), "_test.go") {
			return false
		}
	}
	return len(p.Pass.Files) > 0
}

// markNamed marks the named types t is or mentions (a pointer's or a
// container's element).
func markNamed(t types.Type, out map[*types.Named]bool) {
	for range 8 {
		switch u := types.Unalias(t).(type) {
		case *types.Named:
			out[u.Origin()] = true
			return
		case *types.Pointer:
			t = u.Elem()
		case *types.Slice:
			t = u.Elem()
		case *types.Array:
			t = u.Elem()
		case *types.Map:
			markNamed(u.Key(), out)
			t = u.Elem()
		case *types.Chan:
			t = u.Elem()
		default:
			return
		}
	}
}
