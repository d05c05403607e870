package main

import (
	"bytes"
	"go/token"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// vetFinding converts one diagnostic of go vet's JSON stream into the
// finding the in-process driver makes of the same diagnostic (newFinding).
// The stream has positions as "file:line:col" strings and fix edits as
// byte offsets; an edit's line and column are read from the file, and a
// token.File per edited file lets applyFixes work as it does in process.
func vetFinding(analyzer string, d vetDiagnostic, editFiles *editedFiles) finding {
	f := finding{
		Analyzer: analyzer,
		Category: d.Category,
		Posn:     parsePosn(d.Posn),
		Message:  d.Message,
		fset:     editFiles.fset,
		diag:     analysis.Diagnostic{Category: d.Category, Message: d.Message},
	}
	if d.End != "" && d.End != d.Posn {
		e := parsePosn(d.End)
		f.End = &e
	}
	for _, r := range d.Related {
		f.Related = append(f.Related, related{Posn: parsePosn(r.Posn), Message: r.Message})
	}
	for _, sf := range d.SuggestedFixes {
		fj := fixJSON{Message: sf.Message}
		fix := analysis.SuggestedFix{Message: sf.Message}
		for _, e := range sf.Edits {
			start, end := editFiles.position(e.Filename, e.Start), editFiles.position(e.Filename, e.End)
			fj.Edits = append(fj.Edits, editJSON{Posn: start, End: end, NewText: e.New})
			if pos, endPos, ok := editFiles.pos(e.Filename, e.Start, e.End); ok {
				fix.TextEdits = append(fix.TextEdits, analysis.TextEdit{Pos: pos, End: endPos, NewText: []byte(e.New)})
			}
		}
		f.Fixes = append(f.Fixes, fj)
		f.diag.SuggestedFixes = append(f.diag.SuggestedFixes, fix)
	}
	return f
}

// parsePosn reads token.Position.String's "file:line:col", "file:line" or
// "-", with the file relative to the working directory as posOf makes it.
func parsePosn(s string) position {
	if s == "-" || s == "" {
		return position{}
	}
	var nums []int
	for len(nums) < 2 {
		i := strings.LastIndexByte(s, ':')
		n, err := strconv.Atoi(s[i+1:])
		if i < 0 || err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		s = s[:i]
	}
	p := position{File: relPath(s)}
	if len(nums) > 0 {
		p.Line = nums[0]
	}
	if len(nums) > 1 {
		p.Column = nums[1]
	}
	return p
}

// editedFiles holds the files that the suggested fixes of one run edit,
// as they were when read.
type editedFiles struct {
	fset  *token.FileSet
	files map[string]*editedFile
}

func newEditedFiles() *editedFiles {
	return &editedFiles{fset: token.NewFileSet(), files: map[string]*editedFile{}}
}

type editedFile struct {
	tf         *token.File // nil if unreadable
	lineStarts []int
}

func (e *editedFiles) file(name string) *editedFile {
	if f, ok := e.files[name]; ok {
		return f
	}
	f := new(editedFile)
	if data, err := os.ReadFile(name); err == nil {
		f.tf = e.fset.AddFile(name, -1, len(data))
		f.lineStarts = []int{0}
		for i := 0; ; {
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			f.lineStarts = append(f.lineStarts, i)
		}
	}
	e.files[name] = f
	return f
}

// position is the line and byte column of offset in file name.
func (e *editedFiles) position(name string, offset int) position {
	f := e.file(name)
	line := sort.Search(len(f.lineStarts), func(i int) bool { return f.lineStarts[i] > offset })
	if line == 0 {
		return position{File: relPath(name)}
	}
	return position{File: relPath(name), Line: line, Column: offset - f.lineStarts[line-1] + 1}
}

// pos maps the edit's offsets to token positions in e.fset.
func (e *editedFiles) pos(name string, start, end int) (token.Pos, token.Pos, bool) {
	f := e.file(name)
	if f.tf == nil || start < 0 || end < start || end > f.tf.Size() {
		return token.NoPos, token.NoPos, false
	}
	return f.tf.Pos(start), f.tf.Pos(end), true
}

// sortFindings sorts findings by position and drops duplicates (a package
// and its test variant share files).
func sortFindings(fs []finding) []finding {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].less(fs[j]) })
	out := fs[:0]
	seen := map[string]bool{}
	for _, f := range fs {
		if k := f.key(); !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}
