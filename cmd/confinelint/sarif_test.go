package main

import (
	"bytes"
	"encoding/json"
	"go/token"
	"os"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/internal/checks"
)

// obj and arr walk decoded JSON, failing the test on a missing field.
func obj(t *testing.T, v any, path string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: want an object, got %T", path, v)
	}
	return m
}

func arr(t *testing.T, v any, path string) []any {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: want an array, got %T", path, v)
	}
	return a
}

func str(t *testing.T, m map[string]any, key, path string) string {
	t.Helper()
	s, ok := m[key].(string)
	if !ok || s == "" {
		t.Errorf("%s.%s: want a non-empty string, got %v", path, key, m[key])
	}
	return s
}

func num(t *testing.T, m map[string]any, key, path string) int {
	t.Helper()
	n, ok := m[key].(float64)
	if !ok || n < 1 {
		t.Errorf("%s.%s: want a positive number, got %v", path, key, m[key])
	}
	return int(n)
}

// validateSARIF checks the SARIF 2.1.0 structure GitHub code scanning
// needs and returns the results by ruleId.
func validateSARIF(t *testing.T, data []byte) map[string][]map[string]any {
	t.Helper()
	var log any
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatalf("bad JSON: %v", err)
	}
	root := obj(t, log, "$")
	if root["version"] != "2.1.0" || !strings.Contains(str(t, root, "$schema", "$"), "sarif-2.1.0") {
		t.Errorf("version/$schema: %v %v", root["version"], root["$schema"])
	}
	runs := arr(t, root["runs"], "runs")
	if len(runs) != 1 {
		t.Fatalf("want one run, got %d", len(runs))
	}
	run := obj(t, runs[0], "run")
	driver := obj(t, obj(t, run["tool"], "tool")["driver"], "driver")
	if str(t, driver, "name", "driver") != "confinelint" || !strings.HasPrefix(str(t, driver, "informationUri", "driver"), "https://") {
		t.Errorf("driver: %v", driver)
	}
	rules := map[string]int{}
	for i, r := range arr(t, driver["rules"], "rules") {
		rule := obj(t, r, "rule")
		id := str(t, rule, "id", "rule")
		if _, dup := rules[id]; dup {
			t.Errorf("rule %s defined twice", id)
		}
		rules[id] = i
		str(t, obj(t, rule["shortDescription"], id), "text", id+".shortDescription")
		str(t, obj(t, rule["fullDescription"], id), "text", id+".fullDescription")
		if help := str(t, rule, "helpUri", id); !strings.HasPrefix(help, checks.DocsURL+"#") {
			t.Errorf("%s: helpUri %s does not point into docs/checks.md", id, help)
		}
	}
	for _, c := range checks.All {
		if _, ok := rules[c.ID()]; !ok {
			t.Errorf("check %s has no rule", c.ID())
		}
	}
	base := obj(t, obj(t, run["originalUriBaseIds"], "originalUriBaseIds")[srcRoot], srcRoot)
	if u := str(t, base, "uri", srcRoot); !strings.HasPrefix(u, "file:///") || !strings.HasSuffix(u, "/") {
		t.Errorf("%s uri %q", srcRoot, u)
	}
	byRule := map[string][]map[string]any{}
	for _, r := range arr(t, run["results"], "results") {
		res := obj(t, r, "result")
		id := str(t, res, "ruleId", "result")
		idx, ok := rules[id]
		if !ok {
			t.Errorf("result ruleId %s is not a defined rule", id)
		}
		if n, _ := res["ruleIndex"].(float64); int(n) != idx {
			t.Errorf("result %s: ruleIndex %v, rule is at %d", id, res["ruleIndex"], idx)
		}
		switch res["level"] {
		case "error", "warning", "note":
		default:
			t.Errorf("result %s: level %v", id, res["level"])
		}
		str(t, obj(t, res["message"], "message"), "text", id+".message")
		locs := arr(t, res["locations"], id+".locations")
		if len(locs) == 0 {
			t.Errorf("result %s has no location", id)
		}
		related, _ := res["relatedLocations"].([]any)
		for _, l := range append(locs, related...) {
			checkLocation(t, l, id)
		}
		byRule[id] = append(byRule[id], res)
	}
	return byRule
}

func checkLocation(t *testing.T, l any, id string) {
	t.Helper()
	phys := obj(t, obj(t, l, id+".location")["physicalLocation"], id+".physicalLocation")
	art := obj(t, phys["artifactLocation"], id+".artifactLocation")
	uri := str(t, art, "uri", id+".artifactLocation")
	if strings.Contains(uri, ":") || strings.HasPrefix(uri, "/") || strings.Contains(uri, `\`) || strings.HasPrefix(uri, "../") {
		t.Errorf("%s: uri %q is not a repo-relative forward-slash path", id, uri)
	}
	if art["uriBaseId"] != srcRoot {
		t.Errorf("%s: uriBaseId %v", id, art["uriBaseId"])
	}
	if _, err := os.Stat(uri); err != nil {
		t.Errorf("%s: uri %q does not name a file below the working directory", id, uri)
	}
	reg := obj(t, phys["region"], id+".region")
	sl, el := num(t, reg, "startLine", id), num(t, reg, "endLine", id)
	num(t, reg, "startColumn", id)
	num(t, reg, "endColumn", id)
	if el < sl {
		t.Errorf("%s: region ends before it starts: %v", id, reg)
	}
}

// TestSARIF runs the driver with -f sarif on testdata/mod.
func TestSARIF(t *testing.T) {
	testModule(t)
	out, stderr, code := runDriver(t, "-f", "sarif", "./...")
	if code != exitFindings {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	byRule := validateSARIF(t, []byte(out))
	for _, id := range []string{"directive/unknown", "confined/unused-ignore"} {
		if len(byRule[id]) == 0 {
			t.Errorf("no %s result:\n%s", id, out)
		}
	}
	res := byRule["directive/unknown"][0]
	reg := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
	if uri := reg["artifactLocation"].(map[string]any)["uri"]; uri != "pool/pool.go" {
		t.Errorf("uri %v, want pool/pool.go", uri)
	}
	if line := reg["region"].(map[string]any)["startLine"]; line != 10.0 {
		t.Errorf("startLine %v, want 10", line)
	}
}

// TestSARIFRelatedAndFixes covers the parts the test module cannot
// produce yet: the chain as relatedLocations, fixes, an unknown category
// and UTF-16 columns.
func TestSARIFRelatedAndFixes(t *testing.T) {
	t.Chdir(t.TempDir())
	src := "package p\n\nvar é = 1 // x\n\nfunc f() {}\n"
	write(t, "p/p.go", src)
	fset := token.NewFileSet()
	tf := fset.AddFile(mustAbs(t, "p/p.go"), -1, len(src))
	tf.SetLinesForContent([]byte(src))
	pos := func(off int) token.Pos { return tf.Pos(off) }
	fnOff := strings.Index(src, "func")
	d := analysis.Diagnostic{
		Pos: pos(strings.Index(src, "1 //")), End: pos(strings.Index(src, "1 //") + 1),
		Category: "foreign-access", Message: "f touches é [foreign-access]",
		Related: []analysis.RelatedInformation{{Pos: pos(fnOff), Message: "f is a root"}},
		SuggestedFixes: []analysis.SuggestedFix{{Message: "declare it", TextEdits: []analysis.TextEdit{
			{Pos: pos(fnOff), NewText: []byte("//confined:control\n")},
		}}},
	}
	f1 := newFinding("confined", fset, d)
	d2 := d
	d2.Category, d2.Message, d2.SuggestedFixes, d2.Related = "brand-new", "new [brand-new]", nil, nil
	f2 := newFinding("confined", fset, d2)
	var buf bytes.Buffer
	if err := writeSARIF(&buf, []finding{f1, f2}, newSources()); err != nil {
		t.Fatal(err)
	}
	byRule := validateSARIF(t, buf.Bytes())
	res := byRule["confined/foreign-access"][0]
	loc := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["region"].(map[string]any)
	// "var é = " is 9 bytes but 8 UTF-16 units: the column is 9, not 10.
	if loc["startColumn"] != 9.0 || loc["endColumn"] != 10.0 {
		t.Errorf("region %v, want UTF-16 columns 9..10", loc)
	}
	rel := res["relatedLocations"].([]any)[0].(map[string]any)
	relReg := rel["physicalLocation"].(map[string]any)["region"].(map[string]any)
	if rel["message"].(map[string]any)["text"] != "f is a root" || relReg["startColumn"] != 1.0 || relReg["endColumn"] != 5.0 {
		t.Errorf("related: %v (a position without an end covers the word \"func\")", rel)
	}
	fix := res["fixes"].([]any)[0].(map[string]any)
	ch := fix["artifactChanges"].([]any)[0].(map[string]any)
	rep := ch["replacements"].([]any)[0].(map[string]any)
	if ch["artifactLocation"].(map[string]any)["uri"] != "p/p.go" ||
		rep["insertedContent"].(map[string]any)["text"] != "//confined:control\n" ||
		rep["deletedRegion"].(map[string]any)["startLine"] != 5.0 ||
		rep["deletedRegion"].(map[string]any)["endColumn"] != rep["deletedRegion"].(map[string]any)["startColumn"] {
		t.Errorf("fix: %v", fix)
	}
	if len(byRule["confined/brand-new"]) != 1 {
		t.Errorf("a category missing from the registry must still get a rule")
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return a + string(os.PathSeparator) + p
}
