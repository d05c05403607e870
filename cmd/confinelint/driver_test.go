package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testModule copies testdata/mod to a temporary directory, makes it the
// working directory and returns its path.
func testModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/mod")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return dir
}

// runDriver runs the standalone driver in-process.
func runDriver(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

type jsonOut struct {
	Findings []struct {
		Analyzer, Category, Message string
		Posn                        position
	}
}

func decodeFindings(t *testing.T, s string) jsonOut {
	t.Helper()
	var v jsonOut
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, s)
	}
	return v
}

func TestFormatsAndExitCodes(t *testing.T) {
	testModule(t)
	js, stderr, code := runDriver(t, "-f", "json", "./...")
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFindings, stderr)
	}
	got := decodeFindings(t, js)
	want := map[string]bool{"directive-unknown": false, "unused-ignore": false}
	for _, f := range got.Findings {
		if _, ok := want[f.Category]; ok {
			want[f.Category] = true
		}
		if !strings.HasSuffix(f.Message, " ["+f.Category+"]") {
			t.Errorf("message %q does not end with its category", f.Message)
		}
		if f.Posn.File != filepath.FromSlash("pool/pool.go") {
			t.Errorf("position %v is not relative to the working directory", f.Posn)
		}
	}
	for cat, ok := range want {
		if !ok {
			t.Errorf("no %s finding in %s", cat, js)
		}
	}
	if o, _, err := parseFlags([]string{"-json", "./..."}, io.Discard); err != nil || o.format != "json" {
		t.Errorf("-json is not -f json: %+v, %v", o, err)
	}
	text, _, code := runDriver(t, "./...")
	if code != exitFindings || !strings.Contains(text, "pool/pool.go:10:") {
		t.Errorf("text output (exit %d):\n%s", code, text)
	}
	if _, _, code := runDriver(t, "-f", "xml", "./..."); code != exitError {
		t.Errorf("-f xml: exit %d, want %d", code, exitError)
	}
	if _, _, code := runDriver(t, "./nosuchpkg"); code != exitError {
		t.Errorf("missing package: exit %d, want %d", code, exitError)
	}
}

func TestExitCleanWithoutFindings(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write(t, "go.mod", "module example.com/clean\n\ngo 1.26\n")
	write(t, "clean.go", "package clean\n\n// F is fine.\nfunc F() int { return 1 }\n")
	out, stderr, code := runDriver(t, "-f", "sarif", "./...")
	if code != exitClean {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(out, `"results": []`) {
		t.Errorf("SARIF without findings must have an empty results array:\n%s", out)
	}
}

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
