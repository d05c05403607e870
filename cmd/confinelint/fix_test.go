package main

import (
	"encoding/json"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixReachesFixedPoint runs -fix on the example module and on a module
// of every fixable finding: afterwards no finding has a fix left, a second
// -fix changes no file, and every file is still gofmt-clean.
func TestFixReachesFixedPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	examples := t.TempDir()
	if err := os.CopyFS(examples, os.DirFS(filepath.Join(repo, "examples"))); err != nil {
		t.Fatal(err)
	}
	replaceModule(t, examples, repo)
	fixmod := t.TempDir()
	writeFiles(t, fixmod, map[string]string{
		"go.mod": "module example.com/fix\n\ngo 1.26.0\n\nrequire github.com/confinelint/confinelint v0.0.0\n",
		"loop/loop.go": `package loop

import "github.com/confinelint/confinelint/confine"

type Loop struct {
	owner  confine.Owner //confined:control poll
	paused bool          //confined:control poll
	// confined:control poll
	count int
}

//confined:entry poll
func (l *Loop) run() {
	for !l.paused {
		l.count++
	}
}

// Pause stops the loop.
func (l *Loop) Pause() { l.paused = true }

//confined:control poll
func (l *Loop) Resume() {
	l.paused = false
}

//confined:spawns tsk
func Go(task func()) { go task() }

//confined:contrl poll
func (l *Loop) step() {}

//confined:control pol
func (l *Loop) tick() {}
`,
	})
	replaceModule(t, fixmod, repo)
	for _, mod := range []string{examples, fixmod} {
		before := fixableFindings(t, mod)
		if len(before) == 0 {
			t.Fatalf("%s: no fixable finding to start with", mod)
		}
		runBinary(t, mod, nil, "-fix", "./...")
		once := snapshot(t, mod)
		if left := fixableFindings(t, mod); len(left) > 0 {
			t.Errorf("%s: fixable findings left after -fix: %v", mod, left)
		}
		runBinary(t, mod, nil, "-fix", "./...")
		for name, src := range snapshot(t, mod) {
			if src != once[name] {
				t.Errorf("%s: a second -fix changed it:\n%s", name, src)
			}
			if formatted, err := format.Source([]byte(src)); err != nil || string(formatted) != src {
				t.Errorf("%s is not gofmt-clean after -fix (%v):\n%s", name, err, src)
			}
		}
	}
	fixed := snapshot(t, fixmod)["loop/loop.go"]
	for _, want := range []string{
		"//confined:control poll\n\tcount int", // the near miss, written as a directive
		"func (l *Loop) run() {\n\tl.owner.Bind()",
		"// Pause stops the loop.\n//\n//confined:control poll\nfunc (l *Loop) Pause() {\n\tl.owner.Assert()\n\tl.paused = true\n}",
		"func (l *Loop) Resume() {\n\tl.owner.Assert()",
		"//confined:spawns task",
		"//confined:control poll\nfunc (l *Loop) step() {}",
		"//confined:control poll\nfunc (l *Loop) tick() {}",
	} {
		if !strings.Contains(fixed, want) {
			t.Errorf("fixed loop.go lacks %q:\n%s", want, fixed)
		}
	}
}

// replaceModule points mod's confinelint requirement at the repository.
func replaceModule(t *testing.T, mod, repo string) {
	t.Helper()
	gomod := filepath.Join(mod, "go.mod")
	src, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "replace github.com/confinelint/confinelint") {
			lines[i] = ""
		}
	}
	out := strings.Join(lines, "\n") + "\nreplace github.com/confinelint/confinelint => " + repo + "\n"
	if err := os.WriteFile(gomod, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixableFindings lists the findings that carry a suggested fix.
func fixableFindings(t *testing.T, mod string) []string {
	t.Helper()
	out, stderr, code := runBinary(t, mod, nil, "-f", "json", "./...")
	if code == exitError {
		t.Fatalf("%s: confinelint failed:\n%s", mod, stderr)
	}
	var res struct {
		Findings []struct {
			Message string
			Fixes   []json.RawMessage `json:"suggested_fixes"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	var fixable []string
	for _, f := range res.Findings {
		if len(f.Fixes) > 0 {
			fixable = append(fixable, f.Message)
		}
	}
	return fixable
}

// snapshot reads every Go file of mod, by path relative to it.
func snapshot(t *testing.T, mod string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(mod, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		src, err := os.ReadFile(path)
		rel, _ := filepath.Rel(mod, path)
		files[filepath.ToSlash(rel)] = string(src)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
