package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/analyzers/suggest"
)

// TestSuggestFlag builds confinelint and runs -suggest standalone (with
// -fix) and under go vet on a module whose cache field is locked at every
// site but one: the fix adds the guardedby, after which the checks report
// the one site; without -suggest the checks run and find nothing.
func TestSuggestFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs go vet")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "confinelint")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mod := filepath.Join(dir, "mod")
	writeFiles(t, mod, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"c/c.go": `package c

import "sync"

type Cache struct {
	mu sync.Mutex
	n  int
}

func (c *Cache) Add() { c.mu.Lock(); c.n++; c.mu.Unlock() }

func (c *Cache) Get() int { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

func (c *Cache) Reset() { c.mu.Lock(); c.n = 0; c.mu.Unlock() }

func (c *Cache) Peek() int { return c.n }
`,
	})
	cmd := func(name string, args ...string) (string, error) {
		c := exec.Command(name, args...)
		c.Dir = mod
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := cmd(bin, "./..."); err != nil || out != "" {
		t.Fatalf("the checks on unannotated code: %v\n%s", err, out)
	}
	out, err := cmd("go", "vet", "-vettool="+bin, "-suggest", "./...")
	if err == nil || !strings.Contains(out, "Cache.n: add //confined:guardedby mu") {
		t.Errorf("go vet -suggest: want the guardedby suggestion, got %v\n%s", err, out)
	}
	out, err = cmd(bin, "-suggest", "-f", "json", "./...")
	if err != nil || !strings.Contains(out, `"suggest-guardedby"`) || !strings.Contains(out, `"new": "\t//confined:guardedby mu\n"`) {
		t.Errorf("-suggest -f json: want the suggestion with its fix and exit 0, got %v\n%s", err, out)
	}
	if out, err := cmd(bin, "-suggest", "-fix", "./..."); err != nil {
		t.Fatalf("-suggest -fix: %v\n%s", err, out)
	}
	src, _ := os.ReadFile(filepath.Join(mod, "c", "c.go"))
	if !strings.Contains(string(src), "\t//confined:guardedby mu\n\tn  int\n") {
		t.Fatalf("-suggest -fix did not add the directive:\n%s", src)
	}
	out, _ = cmd(bin, "./...")
	if !strings.Contains(out, "c.go:17:") || strings.Count(out, "[guardedby]") != 1 {
		t.Errorf("after -fix, want the one unlocked access (Peek, c.go:17, one line down after the directive) reported, got:\n%s", out)
	}
}

// TestSuggestNotInDefaultRun: without -suggest the suggest analyzer does
// not run, not even as a dependency of a check, so it costs the default
// run nothing; -suggest=false and other flags leave the set alone.
func TestSuggestNotInDefaultRun(t *testing.T) {
	saved := analyzers
	t.Cleanup(func() { analyzers = saved })
	for _, args := range [][]string{{"./..."}, {"-suggest=false", "./..."}, {"-fix", "-f", "json", "./..."}} {
		analyzers = saved
		if _, on := withSuggest(args); on {
			t.Errorf("%v turns suggest on", args)
		}
		var visit func(a *analysis.Analyzer)
		visit = func(a *analysis.Analyzer) {
			if a == suggest.Analyzer {
				t.Errorf("%v: the default run includes the suggest analyzer", args)
			}
			for _, r := range a.Requires {
				visit(r)
			}
		}
		for _, a := range analyzers {
			visit(a)
		}
	}
	analyzers = saved
	if _, on := withSuggest([]string{"-suggest", "./..."}); !on || len(analyzers) != 1 || analyzers[0] != suggest.Analyzer {
		t.Errorf("-suggest runs %v, want the suggest analyzer alone", analyzers)
	}
}
