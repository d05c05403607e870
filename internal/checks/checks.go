// Package checks is the one registry of confinelint's check metadata: every
// diagnostic category the analyzers can report, with its title, text, a
// wrong and a right example and the fix. The SARIF writer builds its rules
// from it and docs/checks.md is generated from it (see TestDocsUpToDate),
// in the manner of staticcheck's lint.RawDocumentation.
package checks

import (
	"sort"
	"strings"
)

// Check is the documentation of one diagnostic category.
type Check struct {
	// Category is the diagnostic's Category, the "[rule]" suffix of its
	// message and the anchor of its section in docs/checks.md.
	Category string
	// Analyzer reports it: confined, lockorder, revokepath or suggest (off
	// by default). Directive problems use "directive": the analyzer owning
	// the verb reports them.
	Analyzer string
	Level    Level
	Title    string // one line, no trailing period
	Text     string // what is reported and why it matters
	Fix      string // how to fix it
}

// Level is a SARIF result level.
type Level string

const (
	Error   Level = "error"
	Warning Level = "warning"
	Note    Level = "note"
)

// DocsURL is the published docs/checks.md; HelpURI appends the anchor.
const DocsURL = "https://github.com/confinelint/confinelint/blob/main/docs/checks.md"

// ID is the stable rule id used by SARIF and baselines:
// "confined/foreign-access", "directive/args".
func (c Check) ID() string {
	return ID(c.Analyzer, c.Category)
}

// ID builds a rule id from an analyzer (or "directive") and a category.
func ID(analyzer, category string) string {
	return analyzer + "/" + strings.TrimPrefix(category, analyzer+"-")
}

// Wrong is the example package (a directory under ExampleRoot) of code the
// check reports; its // want comments say what.
func (c Check) Wrong() string { return "checks/" + c.Category + "/wrong" }

// Right is the example package of the same code fixed: it must be silent.
func (c Check) Right() string { return "checks/" + c.Category + "/right" }

// HelpURI is the check's section in docs/checks.md.
func (c Check) HelpURI() string { return DocsURL + "#" + c.Category }

// Analyzers are the groups of checks, in documentation order.
var Analyzers = []string{"confined", "lockorder", "revokepath", "directive", "suggest"}

// Lookup returns the check for a diagnostic category.
func Lookup(category string) (Check, bool) {
	for _, c := range All {
		if c.Category == category {
			return c, true
		}
	}
	return Check{}, false
}

// Sorted returns All ordered by analyzer group, then category.
func Sorted() []Check {
	order := map[string]int{}
	for i, a := range Analyzers {
		order[a] = i
	}
	out := append([]Check(nil), All...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Analyzer != out[j].Analyzer {
			return order[out[i].Analyzer] < order[out[j].Analyzer]
		}
		return out[i].Category < out[j].Category
	})
	return out
}
