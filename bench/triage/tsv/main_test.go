package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vetOutput is go vet -json output for two packages: one with a finding in
// an upper-case (escaped) module path that names another cache path in its
// message, one silent, and an analyzer failure.
const vetOutput = `{
	"example.com/Upper/mod/pkg [example.com/Upper/mod/pkg.test]": {
		"lockorder": [
			{
				"category": "lock-leak",
				"posn": "/cache/example.com/!upper/mod@v1.2.3/pkg/a_test.go:12:5",
				"end": "/cache/example.com/!upper/mod@v1.2.3/pkg/a_test.go:12:5",
				"message": "T.mu taken at /cache/other.org/x@v0.0.0-2020/b.go:3:1 is still held\tthere [lock-leak]"
			}
		]
	}
}
{}
{
	"example.com/broken": {
		"confined": {"error": "internal error: boom"}
	}
}
`

func TestNormalize(t *testing.T) {
	var out bytes.Buffer
	if err := normalize(strings.NewReader(vetOutput), &out, newPathNormalizer("/cache/", "/goroot")); err != nil {
		t.Fatal(err)
	}
	want := "example.com/Upper/mod\tlockorder/lock-leak\tpkg/a_test.go:12\tT.mu taken at other.org/x/b.go:3:1 is still held there [lock-leak]\n" +
		"example.com/broken\tconfined/analysis-error\texample.com/broken\tinternal error: boom\n"
	if got := out.String(); got != want {
		t.Errorf("normalize:\n got %q\nwant %q", got, want)
	}
}

func TestNormalizeOutsideCache(t *testing.T) {
	p := newPathNormalizer("/cache", "/goroot/")
	if mod, file := p.position("/src/local/a.go:7:2"); mod != "-" || file != "/src/local/a.go:7" {
		t.Errorf("position outside the cache = %q, %q", mod, file)
	}
	if mod, file := p.position("/goroot/src/net/http/server.go:2216:3"); mod != "std" || file != "net/http/server.go:2216" {
		t.Errorf("position in GOROOT = %q, %q", mod, file)
	}
	if got := p.message("held since /goroot/src/testing/testing.go:1434"); got != "held since testing/testing.go:1434" {
		t.Errorf("message naming GOROOT = %q", got)
	}
}

func TestNormalizeRejectsGarbage(t *testing.T) {
	if err := normalize(strings.NewReader("# pkg\nvet: exit status 1\n"), new(bytes.Buffer), newPathNormalizer("/cache", "")); err == nil {
		t.Error("normalize accepted text that is not go vet -json output")
	}
}

func TestSummary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f.tsv")
	data := "m1\tlockorder/lock-order\ta.go:1\tx\nm1\tlockorder/lock-leak\ta.go:2\ty\nm2\tlockorder/lock-order\tb.go:1\tz\n"
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := summary(file, &out); err != nil {
		t.Fatal(err)
	}
	want := "| module | lockorder/lock-leak | lockorder/lock-order | total |\n|---|---|---|---|\n" +
		"| m1 | 1 | 1 | 2 |\n| m2 |  | 1 | 1 |\n| total | 1 | 2 | 3 |\n"
	if got := out.String(); got != want {
		t.Errorf("summary:\n got %q\nwant %q", got, want)
	}
}
