package main

import (
	"bytes"
	"fmt"
	"os"
	"sort"

	"golang.org/x/tools/go/analysis"
)

// applyFixes applies the first suggested fix of every finding. Edits that
// overlap an edit already accepted for the same file are skipped, so the
// result is always well-formed; identical edits are applied once.
func applyFixes(findings []finding) error {
	type edit struct {
		start, end int
		text       []byte
	}
	byFile := map[string][]edit{}
	for _, f := range findings {
		if len(f.diag.SuggestedFixes) == 0 {
			continue
		}
		fix := f.diag.SuggestedFixes[0]
		for _, te := range fix.TextEdits {
			name, start, end, ok := offsets(f, te)
			if !ok {
				continue
			}
			byFile[name] = append(byFile[name], edit{start, end, te.NewText})
		}
	}
	names := make([]string, 0, len(byFile))
	for n := range byFile {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		edits := byFile[name]
		sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		last := 0
		for i, e := range edits {
			if i > 0 && e.start == edits[i-1].start && e.end == edits[i-1].end && bytes.Equal(e.text, edits[i-1].text) {
				continue
			}
			if e.start < last || e.end > len(src) {
				continue
			}
			out.Write(src[last:e.start])
			out.Write(e.text)
			last = e.end
		}
		out.Write(src[last:])
		if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing %s: %v", name, err)
		}
	}
	return nil
}

func offsets(f finding, te analysis.TextEdit) (string, int, int, bool) {
	file := f.fset.File(te.Pos)
	if file == nil {
		return "", 0, 0, false
	}
	end := te.End
	if !end.IsValid() {
		end = te.Pos
	}
	return file.Name(), file.Offset(te.Pos), file.Offset(end), true
}
