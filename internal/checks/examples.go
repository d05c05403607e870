package checks

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ExampleRoot is where every Go example of the documentation lives,
// relative to the module root: one package per example, analysed by the
// tests in docs/ (a "wrong" example must report what the text says, a
// "right" one must be silent). The docs show an excerpt of each, so that
// the text cannot drift from code the tool was run on.
const ExampleRoot = "docs/testdata/src"

// The lines between these markers are what the docs show of a file; a file
// without markers is shown whole.
const (
	excerptStart = "// example:start"
	excerptEnd   = "// example:end"
)

// wantComment is an analysistest expectation trailing a line, which the
// docs leave out.
var wantComment = regexp.MustCompile("\\s*// want [`\"].*$")

// Excerpt returns what the docs show of the example package dir (relative
// to ExampleRoot under the module root root): the marked regions of its
// files, in file order, separated by a blank line, without // want
// comments and without the indentation they share.
func Excerpt(root, dir string) (string, error) {
	names, err := filepath.Glob(filepath.Join(root, ExampleRoot, dir, "*.go"))
	if err != nil || len(names) == 0 {
		return "", os.ErrNotExist
	}
	slices.Sort(names)
	var regions [][]string
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			return "", err
		}
		regions = append(regions, fileRegions(string(src))...)
	}
	var parts []string
	for _, r := range regions {
		// gofmt wants a blank line between a marker and a doc comment.
		text := strings.Trim(strings.Join(dedent(r), "\n"), "\n")
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n\n"), nil
}

// fileRegions splits src into its marked regions (the whole file when it
// has no marker), with trailing // want comments removed.
func fileRegions(src string) [][]string {
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	for i, l := range lines {
		lines[i] = wantComment.ReplaceAllString(l, "")
	}
	var regions [][]string
	var cur []string
	in, marked := false, false
	for _, l := range lines {
		switch strings.TrimSpace(l) {
		case excerptStart:
			in, marked, cur = true, true, nil
			continue
		case excerptEnd:
			in = false
			regions = append(regions, cur)
			continue
		}
		if in {
			cur = append(cur, l)
		}
	}
	if !marked {
		return [][]string{lines}
	}
	return regions
}

// dedent removes the leading tabs all non-blank lines share.
func dedent(lines []string) []string {
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if common < 0 || n < common {
			common = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		out[i] = strings.TrimRight(l, " \t")
	}
	return out
}
