package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// typeErrorModule has a package with a type error (broken), one that
// imports it (user) and an unrelated one with a real finding (good).
func typeErrorModule(t *testing.T) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":           "module example.com/te\n\ngo 1.26\n",
		"broken/broken.go": "package broken\n\nfunc Bad() int { return \"not an int\" }\n",
		"user/user.go":     "package user\n\nimport \"example.com/te/broken\"\n\nfunc Use() int { return broken.Bad() }\n",
		"good/good.go": `package good

import "sync"

type T struct {
	mu sync.Mutex
	n  int //confined:guardedby mu
}

func (t *T) Get() int { return t.n }
`,
	})
	return dir
}

// TestTypeErrors: the broken package is named with its error, a package
// that imports it is named as not analysed, the other packages are still
// analysed and their findings printed, and the exit status is 1 (the tool
// could not analyse everything), which wins over 3 (findings).
func TestTypeErrors(t *testing.T) {
	dir := typeErrorModule(t)
	for _, format := range []string{"text", "json"} {
		stdout, stderr, code := runBinary(t, dir, nil, "-f", format, "./...")
		if code != exitError {
			t.Errorf("%s: exit %d, want %d (tool error)", format, code, exitError)
		}
		if !strings.Contains(stderr, "package example.com/te/broken: ") || !strings.Contains(stderr, "cannot use \"not an int\"") {
			t.Errorf("%s: the broken package and its error are not named:\n%s", format, stderr)
		}
		if !strings.Contains(stderr, "package example.com/te/user: not analysed: it imports example.com/te/broken, which has errors") {
			t.Errorf("%s: the importer of the broken package is not named:\n%s", format, stderr)
		}
		if strings.Contains(stderr, "failed prerequisites") || strings.Contains(stderr, "panic") {
			t.Errorf("%s: noise or a panic on stderr:\n%s", format, stderr)
		}
		if n := strings.Count(stderr, "\n"); n != 2 {
			t.Errorf("%s: want 2 lines on stderr, got %d:\n%s", format, n, stderr)
		}
		where := filepath.FromSlash("good/good.go") + ":10:"
		if format == "json" {
			where = `"line": 10`
		}
		if !strings.Contains(stdout, where) || !strings.Contains(stdout, "read of T.n without holding T.mu") {
			t.Errorf("%s: the finding in package good is missing:\n%s", format, stdout)
		}
	}
}

// TestTypeErrorsVet: as go vet's tool, go vet reports the type error
// itself; the other package's finding is still reported, nothing panics.
func TestTypeErrorsVet(t *testing.T) {
	dir := typeErrorModule(t)
	vet := exec.Command("go", "vet", "-vettool="+confinelintBinary(t), "./...")
	vet.Dir = dir
	out, err := vet.CombinedOutput()
	text := string(out)
	if err == nil {
		t.Fatalf("go vet succeeded:\n%s", text)
	}
	if strings.Contains(text, "panic") {
		t.Errorf("panic:\n%s", text)
	}
	if !strings.Contains(text, "cannot use \"not an int\"") {
		t.Errorf("go vet did not report the type error:\n%s", text)
	}
	if !strings.Contains(text, "good/good.go:10:") {
		t.Errorf("the finding in package good is missing:\n%s", text)
	}
}

// TestAnalysableRoots: roots that import a package with errors are named
// and left out of the analysis, so their dependencies are not analysed
// for them (a cgo dependency that does not build cost influxdb's run 8 GB
// of analysis that could not be used); a root with errors of its own is
// left out silently (its errors were printed); the others are analysed.
func TestAnalysableRoots(t *testing.T) {
	broken := &packages.Package{PkgPath: "m/broken", Errors: []packages.Error{{Msg: "no cgo"}}}
	big := &packages.Package{PkgPath: "m/big", Imports: map[string]*packages.Package{}}
	user := &packages.Package{PkgPath: "m/user", Imports: map[string]*packages.Package{"m/big": big, "m/broken": broken}}
	userTest := &packages.Package{PkgPath: "m/user", ID: "m/user [m/user.test]", Imports: user.Imports}
	good := &packages.Package{PkgPath: "m/good", Imports: map[string]*packages.Package{"m/big": big}}
	roots, errs := analysable([]*packages.Package{broken, user, userTest, good})
	if len(roots) != 1 || roots[0] != good {
		t.Errorf("analysable roots: got %v, want [m/good]", roots)
	}
	if len(errs) != 1 || errs[0].Error() != "package m/user: not analysed: it imports m/broken, which has errors" {
		t.Errorf("errors: got %v, want one naming m/user once", errs)
	}
}
