package roots

import (
	"go/token"
	"go/types"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/tools/go/ssa"
)

// TestFunc reports whether fn is a function go test runs: TestXxx,
// BenchmarkXxx, FuzzXxx or ExampleXxx declared in a _test.go file, with
// the signature the testing package calls. Each runs on a goroutine of
// its own, as func main does in a program.
func TestFunc(fset *token.FileSet, fn *ssa.Function) bool {
	if fn == nil || fn.Parent() != nil || fn.Signature.Recv() != nil || fn.Object() == nil {
		return false
	}
	if f := fset.File(fn.Pos()); f == nil || !strings.HasSuffix(f.Name(), "_test.go") {
		return false
	}
	sig := fn.Signature
	for _, prefix := range [...]string{"Test", "Benchmark", "Fuzz", "Example"} {
		if !testName(fn.Name(), prefix) {
			continue
		}
		if prefix == "Example" {
			return sig.Params().Len() == 0 && sig.Results().Len() == 0
		}
		return sig.Params().Len() == 1 && sig.Results().Len() == 0 && testingParam(sig.Params().At(0).Type())
	}
	return false
}

// testName is go test's rule: the prefix, then nothing or a character
// that is not a lower-case letter (TestMain is not a test; it runs them).
func testName(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) || name == "TestMain" {
		return false
	}
	rest := name[len(prefix):]
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

// testingParam reports whether t is *testing.T, *testing.B or *testing.F.
func testingParam(t types.Type) bool {
	ptr, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	named, ok := ptr.Elem().(*types.Named)
	if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != "testing" {
		return false
	}
	switch named.Obj().Name() {
	case "T", "B", "F":
		return true
	}
	return false
}

// TestHarness reports whether fn belongs to a test's harness rather than
// to code a test exercises: a test function, a function given the test's
// *testing.T, B or F (or a testing.TB), or a closure inside one of them.
func TestHarness(fset *token.FileSet, fn *ssa.Function) bool {
	for ; fn != nil; fn = fn.Parent() {
		if TestFunc(fset, fn) {
			return true
		}
		for _, p := range fn.Params {
			if testingParam(p.Type()) || testingTB(p.Type()) {
				return true
			}
		}
	}
	return false
}

func testingTB(t types.Type) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == "testing" && named.Obj().Name() == "TB"
}
