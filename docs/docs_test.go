// Package docs_test keeps the documentation honest: every Go example in
// README.md and docs/*.md that carries a directive is an excerpt of a
// package under testdata/src, and every such package is analysed. A
// "wrong" example must report what its // want comments say (which name
// the rule the text is about); a "right" one must be silent.
package docs_test

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/analyzers/suggest"
	"github.com/confinelint/confinelint/internal/alltest"
	"github.com/confinelint/confinelint/internal/checks"
)

var update = flag.Bool("update", false, "rewrite the docs' example blocks from their packages")

// root is the module root, seen from this directory.
const root = ".."

// markdownFiles are the documents whose examples are checked.
func markdownFiles(t *testing.T) []string {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, files...)
}

var marker = regexp.MustCompile(`^<!-- example (\S+) -->$`)

// TestExamplesMatchPackages: each Go block preceded by an example marker is
// the excerpt of its package; a Go block with a directive and no marker is
// an example nobody runs, which is an error.
func TestExamplesMatchPackages(t *testing.T) {
	referenced := map[string]bool{}
	for _, md := range markdownFiles(t) {
		src, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		changed := false
		for i := 0; i < len(lines); i++ {
			if lines[i] != "```go" {
				continue
			}
			end := i + 1
			for end < len(lines) && lines[end] != "```" {
				end++
			}
			block := strings.Join(lines[i+1:end], "\n")
			dir := markerBefore(lines, i)
			switch {
			case dir == "" && (strings.Contains(block, "//confined:") || strings.Contains(block, "+checklocks")):
				t.Errorf("%s:%d: a Go example with a directive must be a package under docs/testdata/src, preceded by %s", md, i+1, checks.ExampleMarker("DIR"))
			case dir != "":
				referenced[dir] = true
				want, err := checks.Excerpt(root, dir)
				if err != nil {
					t.Errorf("%s:%d: example %s: %v", md, i+1, dir, err)
					break
				}
				if block == want {
					break
				}
				if *update {
					lines = slices.Replace(lines, i+1, end, strings.Split(want, "\n")...)
					end = i + 1 + len(strings.Split(want, "\n"))
					changed = true
					break
				}
				t.Errorf("%s:%d: the block differs from example %s (go test ./docs -update):\n--- doc\n%s\n--- example\n%s", md, i+1, dir, block, want)
			}
			i = end
		}
		if changed {
			if err := os.WriteFile(md, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, dir := range examplePackages(t) {
		if !referenced[dir] {
			t.Errorf("example %s is shown by no document", dir)
		}
	}
}

// markerBefore returns the example named on the line before line i.
func markerBefore(lines []string, i int) string {
	if i == 0 {
		return ""
	}
	if m := marker.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
		return m[1]
	}
	return ""
}

// TestExamplesAnalyzed runs the three analyzers over every example (and
// the suggest analyzer over the suggest checks' examples): the // want
// comments are the findings, all of them.
func TestExamplesAnalyzed(t *testing.T) {
	dirs := examplePackages(t)
	for _, dir := range dirs {
		text := packageText(t, dir)
		hasWant := strings.Contains(text, "// want ")
		switch filepath.Base(dir) {
		case "wrong":
			if !hasWant {
				t.Errorf("%s: a wrong example must report something (no // want)", dir)
			}
		case "right":
			if hasWant {
				t.Errorf("%s: a right example must be silent", dir)
			}
		}
	}
	for _, c := range checks.All {
		if !regexp.MustCompile(`// want .*` + regexp.QuoteMeta(regexp.QuoteMeta(`[`+c.Category+`]`))).MatchString(packageText(t, c.Wrong())) {
			t.Errorf("%s: the wrong example wants no finding of its rule", c.Wrong())
		}
	}
	// The suggest checks' examples are for the suggest analyzer: a wrong
	// one is unannotated code it makes suggestions for, a right one the
	// code annotated, which the checks must find correct too.
	var checked, suggested []string
	for _, dir := range dirs {
		if strings.HasPrefix(dir, "checks/suggest-") {
			suggested = append(suggested, dir)
			if filepath.Base(dir) == "wrong" {
				continue
			}
		}
		checked = append(checked, dir)
	}
	analysistest.Run(t, analysistest.TestData(), alltest.Analyzer, checked...)
	analysistest.Run(t, analysistest.TestData(), suggest.Analyzer, suggested...)
}

// examplePackages lists the example packages under testdata/src: every
// directory with Go files, except the stubs of other modules (whose first
// path element is a domain).
func examplePackages(t *testing.T) []string {
	var dirs []string
	src := filepath.Join("testdata", "src")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if rel == "." {
			return nil
		}
		if strings.Contains(strings.Split(rel, string(filepath.Separator))[0], ".") {
			return filepath.SkipDir
		}
		if gos, _ := filepath.Glob(filepath.Join(path, "*.go")); len(gos) > 0 {
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func packageText(t *testing.T, dir string) string {
	names, _ := filepath.Glob(filepath.Join("testdata", "src", dir, "*.go"))
	var b strings.Builder
	for _, n := range names {
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(src)
	}
	return b.String()
}
