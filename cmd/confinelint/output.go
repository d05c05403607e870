package main

import (
	"encoding/json"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/tools/go/analysis"
)

// finding is one diagnostic with resolved positions, ready to print.
type finding struct {
	Analyzer string    `json:"analyzer"`
	Category string    `json:"category"`
	Posn     position  `json:"posn"`
	End      *position `json:"end,omitempty"`
	Message  string    `json:"message"`
	Related  []related `json:"related,omitempty"`
	Fixes    []fixJSON `json:"suggested_fixes,omitempty"`
	fset     *token.FileSet
	diag     analysis.Diagnostic
}

type position struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

func (p position) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column) }

type related struct {
	Posn    position `json:"posn"`
	Message string   `json:"message"`
}

type fixJSON struct {
	Message string     `json:"message"`
	Edits   []editJSON `json:"edits"`
}

type editJSON struct {
	Posn    position `json:"posn"`
	End     position `json:"end"`
	NewText string   `json:"new"`
}

func newFinding(analyzer string, fset *token.FileSet, d analysis.Diagnostic) finding {
	f := finding{
		Analyzer: analyzer,
		Category: d.Category,
		Posn:     posOf(fset, d.Pos),
		Message:  d.Message,
		fset:     fset,
		diag:     d,
	}
	if d.End.IsValid() && d.End != d.Pos {
		e := posOf(fset, d.End)
		f.End = &e
	}
	for _, r := range d.Related {
		f.Related = append(f.Related, related{Posn: posOf(fset, r.Pos), Message: r.Message})
	}
	for _, sf := range d.SuggestedFixes {
		fj := fixJSON{Message: sf.Message}
		for _, e := range sf.TextEdits {
			fj.Edits = append(fj.Edits, editJSON{Posn: posOf(fset, e.Pos), End: posOf(fset, e.End), NewText: string(e.NewText)})
		}
		f.Fixes = append(f.Fixes, fj)
	}
	return f
}

// posOf resolves a position with its file name relative to the working
// directory when it lies below it, so output is the same on every machine.
func posOf(fset *token.FileSet, pos token.Pos) position {
	p := fset.Position(pos)
	return position{File: relPath(p.Filename), Line: p.Line, Column: p.Column}
}

func relPath(name string) string {
	wd, err := os.Getwd()
	if err != nil || name == "" {
		return name
	}
	if rel, err := filepath.Rel(wd, name); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return name
}

func (f finding) key() string {
	return f.Posn.String() + "\x00" + f.Analyzer + "\x00" + f.Message
}

func (f finding) less(g finding) bool {
	if f.Posn.File != g.Posn.File {
		return f.Posn.File < g.Posn.File
	}
	if f.Posn.Line != g.Posn.Line {
		return f.Posn.Line < g.Posn.Line
	}
	if f.Posn.Column != g.Posn.Column {
		return f.Posn.Column < g.Posn.Column
	}
	if f.Analyzer != g.Analyzer {
		return f.Analyzer < g.Analyzer
	}
	return f.Message < g.Message
}

// writeText prints each finding as "file:line:col: message (analyzer)" with
// the proving chain indented beneath it.
func writeText(w io.Writer, findings []finding) error {
	for _, f := range findings {
		if _, err := fmt.Fprintf(w, "%s: %s\n", f.Posn, f.Message); err != nil {
			return err
		}
		for _, r := range f.Related {
			if _, err := fmt.Fprintf(w, "\t%s: %s\n", r.Posn, r.Message); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeJSON prints {"findings": [...]} sorted by position.
func writeJSON(w io.Writer, findings []finding) error {
	if findings == nil {
		findings = []finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Findings []finding `json:"findings"`
	}{findings})
}
