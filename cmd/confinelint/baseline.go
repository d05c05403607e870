package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A baseline records the findings a codebase already has, so that CI can
// fail only on new ones. Each finding is identified by a fingerprint that
// survives edits elsewhere in the file: a hash of its rule, file, message
// with line numbers stripped, the trimmed text of its source line and its
// index among findings that agree on all of those.

type baselineFile struct {
	Version  int             `json:"version"`
	Tool     string          `json:"tool"`
	Findings []baselineEntry `json:"findings"`
}

type baselineEntry struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	File        string `json:"file"`
	Message     string `json:"message"`
}

const baselineVersion = 1

var lineNumbers = regexp.MustCompile(`(:\d+)+\b|\b[Ll]ine \d+\b`)

// stripLines removes positions from a message ("a.go:12:3" -> "a.go",
// "line 12" -> "line").
func stripLines(msg string) string {
	return lineNumbers.ReplaceAllStringFunc(msg, func(m string) string {
		if strings.HasPrefix(m, ":") {
			return ""
		}
		return m[:4]
	})
}

func ruleOf(f finding) string { return f.Analyzer + "/" + f.Category }

// fingerprints returns one fingerprint per finding (same order). Findings
// must be sorted by position so that occurrence indexes are stable.
func fingerprints(findings []finding, src *sources) []string {
	seen := map[string]int{}
	out := make([]string, len(findings))
	for i, f := range findings {
		key := strings.Join([]string{
			ruleOf(f),
			filepath.ToSlash(f.Posn.File),
			stripLines(f.Message),
			strings.TrimSpace(src.line(f.Posn.File, f.Posn.Line)),
		}, "\x00")
		n := seen[key]
		seen[key] = n + 1
		sum := sha256.Sum256([]byte(key + "\x00" + strconv.Itoa(n)))
		out[i] = hex.EncodeToString(sum[:16])
	}
	return out
}

// writeBaseline records findings in file, sorted, one entry each.
func writeBaseline(file string, findings []finding, src *sources) error {
	fps := fingerprints(findings, src)
	b := baselineFile{Version: baselineVersion, Tool: "confinelint", Findings: []baselineEntry{}}
	for i, f := range findings {
		b.Findings = append(b.Findings, baselineEntry{
			Fingerprint: fps[i],
			Rule:        ruleOf(f),
			File:        filepath.ToSlash(f.Posn.File),
			Message:     stripLines(f.Message),
		})
	}
	sort.Slice(b.Findings, func(i, j int) bool {
		x, y := b.Findings[i], b.Findings[j]
		if x.File != y.File {
			return x.File < y.File
		}
		if x.Rule != y.Rule {
			return x.Rule < y.Rule
		}
		if x.Message != y.Message {
			return x.Message < y.Message
		}
		return x.Fingerprint < y.Fingerprint
	})
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

// filterBaseline drops the findings recorded in file and returns the new
// ones and the number of baseline entries no longer found.
func filterBaseline(file string, findings []finding, src *sources) (fresh []finding, stale int, err error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, 0, err
	}
	var b baselineFile
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, 0, fmt.Errorf("%s: %v", file, err)
	}
	if b.Version != baselineVersion {
		return nil, 0, fmt.Errorf("%s: baseline version %d, want %d (rewrite it with -baseline-write)", file, b.Version, baselineVersion)
	}
	known := map[string]int{}
	for _, e := range b.Findings {
		known[e.Fingerprint]++
	}
	for i, fp := range fingerprints(findings, src) {
		if known[fp] > 0 {
			known[fp]--
			continue
		}
		fresh = append(fresh, findings[i])
	}
	for _, n := range known {
		stale += n
	}
	return fresh, stale, nil
}

// sources caches file contents by line, for fingerprints and SARIF
// columns.
type sources struct{ files map[string][]string }

func newSources() *sources { return &sources{files: map[string][]string{}} }

// line returns line n (1-based) of file, or "" if unreadable.
func (s *sources) line(file string, n int) string {
	lines, ok := s.files[file]
	if !ok {
		data, err := os.ReadFile(file)
		if err == nil {
			lines = strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		}
		s.files[file] = lines
	}
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}
