package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/confinelint/confinelint/internal/checks"
)

// SARIF 2.1.0, the subset GitHub code scanning reads.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                   `json:"tool"`
	OriginalURIBaseIDs map[string]sarifArtifactLoc `json:"originalUriBaseIds,omitempty"`
	Results            []sarifResult               `json:"results"`
	ColumnKind         string                      `json:"columnKind"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string        `json:"id"`
	Name                 string        `json:"name"`
	ShortDescription     sarifText     `json:"shortDescription"`
	FullDescription      sarifText     `json:"fullDescription"`
	HelpURI              string        `json:"helpUri"`
	Help                 *sarifHelp    `json:"help,omitempty"`
	DefaultConfiguration sarifRuleConf `json:"defaultConfiguration"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	RelatedLocations    []sarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	Fixes               []sarifFix        `json:"fixes,omitempty"`
}

type sarifLocation struct {
	ID               int           `json:"id,omitempty"`
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
	Message          *sarifText    `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLoc `json:"artifactLocation"`
	Region           sarifRegion      `json:"region"`
}

type sarifArtifactLoc struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine"`
	EndColumn   int `json:"endColumn"`
}

type sarifFix struct {
	Description     sarifText             `json:"description"`
	ArtifactChanges []sarifArtifactChange `json:"artifactChanges"`
}

type sarifArtifactChange struct {
	ArtifactLocation sarifArtifactLoc   `json:"artifactLocation"`
	Replacements     []sarifReplacement `json:"replacements"`
}

type sarifReplacement struct {
	DeletedRegion   sarifRegion `json:"deletedRegion"`
	InsertedContent sarifText   `json:"insertedContent"`
}

const (
	srcRoot        = "%SRCROOT%"
	informationURI = "https://github.com/confinelint/confinelint"
)

// writeSARIF prints findings as one SARIF 2.1.0 run. Rules are every check
// of the registry (plus a bare rule for a category it lacks, so every
// ruleId is defined); paths below the working directory are relative to
// %SRCROOT%, which is the working directory.
func writeSARIF(w io.Writer, findings []finding, src *sources) error {
	var rules []sarifRule
	index := map[string]int{}
	addRule := func(c checks.Check) {
		index[c.Category] = len(rules)
		rules = append(rules, sarifRule{
			ID:                   c.ID(),
			Name:                 c.Category,
			ShortDescription:     sarifText{c.Title},
			FullDescription:      sarifText{c.Text},
			HelpURI:              c.HelpURI(),
			Help:                 &sarifHelp{Text: c.Text + "\n\nFix: " + c.Fix, Markdown: c.Text + "\n\n**Fix:** " + c.Fix + "\n\n[docs](" + c.HelpURI() + ")"},
			DefaultConfiguration: sarifRuleConf{string(c.Level)},
		})
	}
	for _, c := range checks.Sorted() {
		addRule(c)
	}
	fps := fingerprints(findings, src)
	run := sarifRun{ColumnKind: "utf16CodeUnits", Results: []sarifResult{}}
	if wd, err := os.Getwd(); err == nil {
		run.OriginalURIBaseIDs = map[string]sarifArtifactLoc{srcRoot: {URI: fileURI(wd) + "/"}}
	}
	for i, f := range findings {
		c, ok := checks.Lookup(f.Category)
		if !ok {
			c = checks.Check{Category: f.Category, Analyzer: f.Analyzer, Level: checks.Warning,
				Title: f.Category, Text: "Reported by " + f.Analyzer + "."}
			if _, dup := index[f.Category]; !dup {
				addRule(c)
			}
		}
		res := sarifResult{
			RuleID:              c.ID(),
			RuleIndex:           index[c.Category],
			Level:               string(c.Level),
			Message:             sarifText{f.Message},
			Locations:           []sarifLocation{src.location(f.Posn, f.End, "")},
			PartialFingerprints: map[string]string{"confinelint/v1": fps[i]},
		}
		for j, r := range f.Related {
			loc := src.location(r.Posn, nil, r.Message)
			loc.ID = j + 1
			res.RelatedLocations = append(res.RelatedLocations, loc)
		}
		for _, fx := range f.Fixes {
			res.Fixes = append(res.Fixes, src.fix(fx))
		}
		run.Results = append(run.Results, res)
	}
	run.Tool = sarifTool{sarifDriver{Name: "confinelint", Version: moduleVersion(), InformationURI: informationURI, Rules: rules}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{run},
	})
}

// artifact is a file as SARIF names it: relative to %SRCROOT% when the
// finding's path is relative (below the working directory), else a file URI.
func artifact(file string) sarifArtifactLoc {
	if filepath.IsAbs(file) {
		return sarifArtifactLoc{URI: fileURI(file)}
	}
	return sarifArtifactLoc{URI: filepath.ToSlash(file), URIBaseID: srcRoot}
}

func fileURI(abs string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x -> /C:/x
	}
	return "file://" + p
}

func (s *sources) location(start position, end *position, msg string) sarifLocation {
	loc := sarifLocation{PhysicalLocation: sarifPhysical{
		ArtifactLocation: artifact(start.File),
		Region:           s.region(start, end),
	}}
	if msg != "" {
		loc.Message = &sarifText{msg}
	}
	return loc
}

// region converts Go's byte columns to UTF-16 columns. A finding without
// an end covers the identifier (or the one character) at its start.
func (s *sources) region(start position, end *position) sarifRegion {
	e := start
	if end != nil && end.File == start.File {
		e = *end
	} else if line := s.line(start.File, start.Line); start.Column >= 1 && start.Column <= len(line) {
		n := len(line[start.Column-1:]) - len(strings.TrimLeftFunc(line[start.Column-1:], isIdent))
		if n == 0 {
			_, n = utf8.DecodeRuneInString(line[start.Column-1:])
		}
		e.Column += n
	}
	return sarifRegion{
		StartLine:   max(start.Line, 1),
		StartColumn: s.utf16Col(start),
		EndLine:     max(e.Line, 1),
		EndColumn:   s.utf16Col(e),
	}
}

func isIdent(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func (s *sources) utf16Col(p position) int {
	if p.Column < 1 {
		return 1
	}
	line := s.line(p.File, p.Line)
	if p.Column-1 > len(line) {
		return p.Column
	}
	return len(utf16.Encode([]rune(line[:p.Column-1]))) + 1
}

func (s *sources) fix(fx fixJSON) sarifFix {
	byFile := map[string]int{}
	out := sarifFix{Description: sarifText{fx.Message}}
	for _, e := range fx.Edits {
		i, ok := byFile[e.Posn.File]
		if !ok {
			i = len(out.ArtifactChanges)
			byFile[e.Posn.File] = i
			out.ArtifactChanges = append(out.ArtifactChanges, sarifArtifactChange{ArtifactLocation: artifact(e.Posn.File)})
		}
		end := e.End
		if end.File == "" { // no End: an insertion at Posn
			end = e.Posn
		}
		ac := &out.ArtifactChanges[i]
		ac.Replacements = append(ac.Replacements, sarifReplacement{
			DeletedRegion:   s.region(e.Posn, &end),
			InsertedContent: sarifText{e.NewText},
		})
	}
	return out
}
