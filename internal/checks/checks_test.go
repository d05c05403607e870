package checks

import (
	"flag"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/checks.md from the registry")

const docsPath = "../../docs/checks.md"

func TestRegistryWellFormed(t *testing.T) {
	cats, ids := map[string]bool{}, map[string]bool{}
	groups := map[string]bool{}
	for _, a := range Analyzers {
		groups[a] = true
	}
	for _, c := range All {
		if cats[c.Category] || ids[c.ID()] {
			t.Errorf("%s: duplicate category or id", c.Category)
		}
		cats[c.Category], ids[c.ID()] = true, true
		if !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(c.Category) {
			t.Errorf("%q: category must be lower-case words joined by '-'", c.Category)
		}
		if !groups[c.Analyzer] {
			t.Errorf("%s: unknown analyzer %q", c.Category, c.Analyzer)
		}
		if c.Level != Error && c.Level != Warning && c.Level != Note {
			t.Errorf("%s: bad level %q", c.Category, c.Level)
		}
		for name, s := range map[string]string{"Title": c.Title, "Text": c.Text, "Fix": c.Fix} {
			if strings.TrimSpace(s) == "" {
				t.Errorf("%s: no %s", c.Category, name)
			}
		}
		wrong, errW := Excerpt("../..", c.Wrong())
		right, errR := Excerpt("../..", c.Right())
		if errW != nil || errR != nil || wrong == right {
			t.Errorf("%s: the wrong and right examples must exist and differ (%v, %v)", c.Category, errW, errR)
		}
		if strings.HasSuffix(c.Title, ".") {
			t.Errorf("%s: title ends with a period", c.Category)
		}
	}
}

// TestDocsUpToDate fails when docs/checks.md is not what the registry
// generates, or when a registry entry has no section in it.
func TestDocsUpToDate(t *testing.T) {
	want, err := Markdown("../..")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/checks -update)", err)
	}
	if string(got) != want {
		t.Errorf("docs/checks.md is stale: run go test ./internal/checks -update")
	}
	for _, c := range All {
		if !strings.Contains(string(got), "\n### "+c.Category+"\n") {
			t.Errorf("docs/checks.md has no section for %s", c.Category)
		}
	}
}

// TestEveryCategoryDocumented enumerates the categories the code can
// report and fails on one the registry does not document.
func TestEveryCategoryDocumented(t *testing.T) {
	found := sourceCategories(t, "../..")
	if len(found) < 10 {
		t.Fatalf("found only %d categories in the source; the scan is broken: %v", len(found), found)
	}
	for cat, where := range wantCategories(t, "../..") {
		if _, ok := found[cat]; !ok {
			found[cat] = where
		}
	}
	for cat, where := range found {
		if _, ok := Lookup(cat); !ok {
			t.Errorf("category %q (%s) is not documented in internal/checks", cat, where)
		}
	}
	var notYet []string
	for _, c := range All {
		if _, ok := found[c.Category]; !ok {
			notYet = append(notYet, c.Category)
		}
	}
	sort.Strings(notYet)
	if len(notYet) > 0 {
		t.Errorf("documented but reported by no source (renamed or removed?): %s", strings.Join(notYet, ", "))
	}
}
