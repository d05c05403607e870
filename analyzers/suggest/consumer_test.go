package suggest_test

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/confinelint/confinelint/analyzers/confined"
	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/analyzers/revokepath"
	"github.com/confinelint/confinelint/analyzers/suggest"
)

// TestConsumerRoundTrip runs suggest on examples/consumer and its broker
// with every annotation removed (testdata/src/example.com/pipeline). The
// fixes must turn them into the .golden files; the golden files, checked
// by confined, lockorder and revokepath, must report the bugs planted in
// the example, and nothing else.
func TestConsumerRoundTrip(t *testing.T) {
	t.Parallel()
	const consumer, broker = "example.com/pipeline/consumer", "example.com/pipeline/broker"
	testdata := analysistest.TestData()
	analysistest.RunWithSuggestedFixes(t, testdata, suggest.Analyzer, consumer, broker)

	// The annotated tree: the golden files, with the confine stub.
	root := t.TempDir()
	src := filepath.Join(testdata, "src")
	for _, pkg := range []string{consumer, broker} {
		name := filepath.Base(pkg) + ".go"
		copyFile(t, filepath.Join(src, pkg, name+".golden"), filepath.Join(root, "src", pkg, name))
	}
	stub := "github.com/confinelint/confinelint/confine/confine.go"
	copyFile(t, filepath.Join(src, stub), filepath.Join(root, "src", stub))

	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: root,
		Env: append(os.Environ(), "GOPATH="+root, "GO111MODULE=off", "GOPROXY=off", "GOFLAGS=")}
	pkgs, err := packages.Load(cfg, consumer, broker)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the annotated copy does not load")
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{confined.Analyzer, lockorder.Analyzer, revokepath.Analyzer}, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		for _, d := range act.Diagnostics {
			p := act.Package.Fset.Position(d.Pos)
			got = append(got, filepath.Base(p.Filename)+":"+strconv.Itoa(p.Line)+" "+d.Category)
		}
	}
	sort.Strings(got)

	// The planted bugs, found by their code in the golden file.
	golden := readFile(t, filepath.Join(src, consumer, "consumer.go.golden"))
	want := []string{
		"consumer.go:" + strconv.Itoa(lineOf(t, golden, "func (c *Consumer) onRevoked", "c.inflight -= len(partitions)")) + " foreign-access",
		"consumer.go:" + strconv.Itoa(lineOf(t, golden, "func (c *Consumer) onRevoked", "c.commit()")) + " inline-commit",
		"consumer.go:" + strconv.Itoa(lineOf(t, golden, "func (c *Consumer) Stats", "c.commitMu.Lock()")) + " lock-order",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the annotated consumer reports\n%s\nwant the planted bugs\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// lineOf returns the line of the first occurrence of code after the
// line holding after.
func lineOf(t *testing.T, text, after, code string) int {
	t.Helper()
	lines := strings.Split(text, "\n")
	seen := false
	for i, l := range lines {
		if strings.Contains(l, after) {
			seen = true
		}
		if seen && strings.Contains(l, code) {
			return i + 1
		}
	}
	t.Fatalf("no %q after %q", code, after)
	return 0
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, []byte(readFile(t, from)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConsumerCopyInSync checks that the unannotated copy has the code of
// examples/consumer and examples/broker, so that the round trip tests the
// example (the copy differs in comments only: no directives, want
// comments instead).
func TestConsumerCopyInSync(t *testing.T) {
	for _, pkg := range []string{"consumer", "broker"} {
		example := readFile(t, filepath.Join("..", "..", "examples", pkg, pkg+".go"))
		copied := readFile(t, filepath.Join(analysistest.TestData(), "src", "example.com", "pipeline", pkg, pkg+".go"))
		if code(copied) != code(example) {
			t.Errorf("the code of testdata/src/example.com/pipeline/%s/%s.go is no longer that of examples/%s: update the copy", pkg, pkg, pkg)
		}
	}
}

// code returns text's non-blank lines without their comments (the files
// hold no "//" in strings).
func code(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimRight(l, " \t"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
