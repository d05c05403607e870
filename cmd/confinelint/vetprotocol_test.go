package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/analysis/passes/inspect"
)

// TestVetProtocolCarriesFacts builds confinelint and runs it as go vet's
// tool on a two-package module: package b names a role that only package a
// declares, which b can know only from a's facts. A misspelled role in b
// must still be reported, so the test fails both if facts are lost and if
// role checking is a no-op.
func TestVetProtocolCarriesFacts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs go vet")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "confinelint")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mod := filepath.Join(dir, "mod")
	writeFiles(t, mod, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"a/a.go": `package a

// Poll is the poll goroutine.
//
//confined:entry poll
func Poll() {}
`,
		"b/b.go": `package b

import _ "example.com/m/a"

// Owned is touched only by the poll goroutine that package a declares.
//
//confined:control poll
var Owned int

// Typo names a role nobody declares.
//
//confined:control pol
var Typo int
`,
	})
	vet := exec.Command("go", "vet", "-vettool="+bin, "./...")
	vet.Dir = mod
	out, err := vet.CombinedOutput()
	if err == nil {
		t.Fatalf("go vet succeeded, want the misspelled role reported:\n%s", out)
	}
	text := string(out)
	if !strings.Contains(text, `b.go:12`) || !strings.Contains(text, `"pol"`) {
		t.Errorf("want the unknown role \"pol\" reported at b.go:12, got:\n%s", text)
	}
	if strings.Contains(text, "b.go:7") {
		t.Errorf("role \"poll\" declared in package a was not carried to b by facts:\n%s", text)
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeanResultsHaveOneReader guards vetmem.Lean: it is safe only while
// no analyzer of the vet tool but ctrlflow reads the inspect analyzer's
// result, which Lean provides to ctrlflow alone, and none but buildssa
// reads ctrlflow's, which Lean reduces to what buildssa asks of it.
func TestLeanResultsHaveOneReader(t *testing.T) {
	seen := map[*analysis.Analyzer]bool{}
	var walk func(a *analysis.Analyzer)
	walk = func(a *analysis.Analyzer) {
		if seen[a] {
			return
		}
		seen[a] = true
		for _, r := range a.Requires {
			if r == inspect.Analyzer && a != ctrlflow.Analyzer {
				t.Errorf("%s requires inspect: vetmem.Lean would starve it", a.Name)
			}
			if r == ctrlflow.Analyzer && a != buildssa.Analyzer {
				t.Errorf("%s requires ctrlflow: vetmem.Lean gives it the no-return set only", a.Name)
			}
			walk(r)
		}
	}
	for _, a := range append(analyzers, unitAnalyzer) {
		walk(a)
	}
	if !seen[ctrlflow.Analyzer] {
		t.Errorf("ctrlflow is not in the vet tool's graph any more: vetmem.Lean is moot")
	}
}

// TestNoReadsOfDroppedTypeInfo: once SSA is built, vetmem.Lean drops the
// type checker's Uses and Selections and the types of expressions that are
// not declarations' types (vetmem.keepDeclTypes). Code that reads them
// after SSA would see nothing under go vet and everything in tests, so no
// analyzer source may name them; TestDriversAgree covers the reads it keeps.
func TestNoReadsOfDroppedTypeInfo(t *testing.T) {
	dropped := []string{".Uses[", ".Uses)", ".Selections", ".ObjectOf(", "typeutil."}
	for _, dir := range []string{"../../analyzers", "../../internal", "../../facts"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vetmem") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, name := range dropped {
				if strings.Contains(string(src), name) {
					t.Errorf("%s reads %q, which the vet tool drops after SSA (internal/vetmem/info.go)", path, name)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
