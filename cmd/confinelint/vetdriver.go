package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/confinelint/confinelint/analyzers/suggest"
)

// The standalone driver asks the go command to run this binary as go vet's
// tool over the patterns: one process per package, memory bounded by the
// widest package, every result (facts and findings) cached in the go build
// cache, so a rerun redoes only what changed. The tool, told so by
// -standalone (vettool.go), reports findings in JSON on stdout; the driver
// keeps the units it asked for and renders them like the in-process driver
// did. Packages that go vet cannot analyse (they or their dependencies do
// not load or type-check) go to the in-process driver, which reports their
// errors and analyses what it can, as before.

// listedPackage is what the driver needs of `go list` for a requested
// package.
type listedPackage struct {
	ImportPath   string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	Error        *struct{ Err string }
	DepsErrors   []*struct{ Err string }
}

// unitKey names a unit of go vet's stream: the package path go vet gives
// it and what unitAnalyzer says it is.
type unitKey struct{ id, kind string }

// units returns the units go vet reports for p: the package with its
// internal tests (or without, if it has none or -test=false) and its
// external test package.
func (p *listedPackage) units(tests bool) []unitKey {
	var out []unitKey
	switch {
	case tests && len(p.TestGoFiles) > 0:
		out = append(out, unitKey{p.ImportPath, unitTest})
	case len(p.GoFiles)+len(p.CgoFiles) > 0:
		out = append(out, unitKey{p.ImportPath, unitPlain})
	}
	if tests && len(p.XTestGoFiles) > 0 {
		out = append(out, unitKey{p.ImportPath + "_test", unitTest})
	}
	return out
}

// variant names a unit the way go/packages does ("p [p.test]"), for error
// messages.
func (u unitKey) variant(root string) string {
	if u.kind == unitPlain {
		return u.id
	}
	return u.id + " [" + root + ".test]"
}

// analyzeWithVet is analyze's default path: go vet for every package that
// builds, the in-process driver for the others.
func analyzeWithVet(o *options, patterns []string, stderr io.Writer) ([]finding, []error, int, bool) {
	if err := checkAsyncFlagListed(o, patterns); err != nil {
		fmt.Fprintf(stderr, "confinelint: %v\n", err)
		return nil, nil, exitError, false
	}
	// go vet runs while go list names the requested packages and their
	// files: on a rerun the time goes to the go command loading packages.
	// The listing does not load dependencies (-find): when go vet
	// succeeds, every package loaded. When it fails, the packages are
	// listed again with their load errors and their dependencies'.
	type listing struct {
		roots []*listedPackage
		err   error
	}
	listed := make(chan listing, 1)
	go func() {
		roots, err := goList(o, patterns, true)
		listed <- listing{roots, err}
	}()
	vet := runVet(o, patterns, stderr)
	l := <-listed
	if l.err == nil && vet.err != nil {
		l.roots, l.err = goList(o, patterns, false)
	}
	if l.err != nil {
		// go list itself failed (no module, bad flags): the in-process
		// driver reports it exactly as it always has.
		return analyzeInProcess(o, patterns, stderr)
	}
	roots := l.roots
	var good, broken []*listedPackage
	for _, p := range roots {
		if p.Error != nil || len(p.DepsErrors) > 0 {
			broken = append(broken, p)
		} else {
			good = append(good, p)
		}
	}
	if len(broken) > 0 && len(good) > 0 && vet.err != nil {
		// go vet refuses to run at all when a package does not load.
		vet = runVet(o, importPaths(good), stderr)
	}
	var findings []finding
	var errs []error
	status := exitClean
	var failed []*listedPackage
	edits := newEditedFiles()
	for _, p := range good {
		if !hasAll(vet.units, p.units(o.tests)) {
			failed = append(failed, p)
			continue
		}
		for _, k := range p.units(o.tests) {
			fs, es := vet.units[k].findings(o, k.variant(p.ImportPath), edits)
			findings = append(findings, fs...)
			errs = append(errs, es...)
		}
	}
	if vet.err != nil && len(good) > 0 && len(failed) == 0 {
		// go vet failed, yet every requested unit was reported: say
		// what go vet said.
		fmt.Fprintf(stderr, "confinelint: go vet: %v\n%s", vet.err, vet.stderr)
		status = exitError
	}
	broken = append(broken, failed...)
	if len(broken) > 0 {
		// In go list's order, which is the order in which the in-process
		// driver prints load errors.
		viaChecker := map[*listedPackage]bool{}
		for _, p := range broken {
			viaChecker[p] = true
		}
		broken = broken[:0]
		for _, p := range roots {
			if viaChecker[p] {
				broken = append(broken, p)
			}
		}
		more, moreErrs, moreStatus, ok := inProcess(o, importPaths(broken), stderr, false)
		if !ok {
			return nil, nil, exitError, false
		}
		findings = append(findings, more...)
		errs = append(errs, moreErrs...)
		status = max(status, moreStatus)
	}
	return sortFindings(findings), errs, status, true
}

func importPaths(pkgs []*listedPackage) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = p.ImportPath
	}
	return out
}

func hasAll(units map[unitKey]*vetUnit, keys []unitKey) bool {
	for _, k := range keys {
		if units[k] == nil {
			return false
		}
	}
	return true
}

// goList lists the requested packages (not their dependencies) with their
// files and load errors; with find, without loading their dependencies,
// so without their errors.
func goList(o *options, patterns []string, find bool) ([]*listedPackage, error) {
	args := []string{"list", "-e", "-json=ImportPath,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,Error,DepsErrors"}
	if find {
		args = append(args, "-find")
	}
	args = append(args, o.buildFlags()...)
	cmd := exec.Command("go", append(args, patterns...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.Bytes())
	}
	var pkgs []*listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		p := new(listedPackage)
		if err := dec.Decode(p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

func (o *options) buildFlags() []string {
	if o.tags == "" {
		return nil
	}
	return []string{"-tags=" + o.tags}
}

// vetRun is what a go vet run gave: the units of its stream (less the
// recompiled ones), its stderr, and its failure if any.
type vetRun struct {
	units  map[unitKey]*vetUnit
	stderr []byte
	err    error
}

// runVet runs go vet with this binary as the tool over patterns.
func runVet(o *options, patterns []string, stderr io.Writer) vetRun {
	self, err := os.Executable()
	if err != nil {
		return vetRun{err: err}
	}
	mode := modeTests
	if !o.tests {
		mode = modeNoTests
	}
	args := []string{"vet", "-vettool=" + self, "-json", "-" + standaloneFlag + "=" + mode}
	if slices.Contains(analyzers, suggest.Analyzer) {
		// -suggest replaces the checks, in the tool as here (withSuggest).
		args = append(args, "-suggest")
	}
	args = append(args, o.buildFlags()...)
	args = append(args, o.analyzerFlags...)
	cmd := exec.Command("go", append(args, patterns...)...)
	var vetStderr bytes.Buffer
	cmd.Stderr = &vetStderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return vetRun{err: err}
	}
	prog := newProgress(stderr, o, patterns)
	defer prog.done()
	if err := cmd.Start(); err != nil {
		return vetRun{err: err}
	}
	units, decodeErr := decodeUnits(stdout, prog.unit)
	if decodeErr != nil {
		io.Copy(io.Discard, stdout) // let go vet finish
	}
	err = cmd.Wait()
	return vetRun{units, vetStderr.Bytes(), errors.Join(err, decodeErr)}
}

// vetUnit is one unit's part of the stream: per analyzer, its diagnostics
// (unitchecker's JSON) or its error.
type vetUnit map[string]json.RawMessage

type vetDiagnostic struct {
	Category       string
	Posn           string
	End            string
	Message        string
	SuggestedFixes []vetFix `json:"suggested_fixes"`
	Related        []struct{ Posn, End, Message string }
}

type vetFix struct {
	Message string
	Edits   []struct {
		Filename   string
		Start, End int
		New        string
	}
}

// decodeUnits reads go vet's stdout, one JSON object per unit ({"path":
// {"analyzer": ...}}), and keeps the units that are not recompiled
// dependencies.
func decodeUnits(r io.Reader, seen func()) (map[unitKey]*vetUnit, error) {
	units := map[unitKey]*vetUnit{}
	dec := json.NewDecoder(r)
	for {
		var obj map[string]vetUnit
		if err := dec.Decode(&obj); err == io.EOF {
			return units, nil
		} else if err != nil {
			return units, fmt.Errorf("reading go vet's output: %v", err)
		}
		for id, u := range obj {
			seen()
			var marks []vetDiagnostic
			if err := json.Unmarshal(u[unitAnalyzer.Name], &marks); err != nil || len(marks) != 1 {
				return units, fmt.Errorf("go vet's output for %s lacks the unit kind", id)
			}
			if k := (unitKey{id, marks[0].Message}); k.kind != unitRecompiled {
				units[k] = &u
			}
		}
	}
}

// findings converts the unit's diagnostics of the selected analyzers, and
// their errors, named after variant.
func (u *vetUnit) findings(o *options, variant string, edits *editedFiles) ([]finding, []error) {
	var out []finding
	var errs []error
	for _, a := range o.selected() {
		raw, ok := (*u)[a.Name]
		if !ok {
			continue
		}
		var failure struct{ Error string }
		if json.Unmarshal(raw, &failure) == nil && failure.Error != "" {
			errs = append(errs, fmt.Errorf("%s@%s: %s", a.Name, variant, failure.Error))
			continue
		}
		var diags []vetDiagnostic
		if err := json.Unmarshal(raw, &diags); err != nil {
			errs = append(errs, fmt.Errorf("%s@%s: reading go vet's output: %v", a.Name, variant, err))
			continue
		}
		for _, d := range diags {
			out = append(out, vetFinding(a.Name, d, edits))
		}
	}
	return out, errs
}

// analyzerFlags returns the analyzer options (-NAME.FLAG) set on the
// command line, to pass on to the tool. The -NAME enable flags are not
// passed: every analyzer runs, and the driver keeps the selected ones.
func analyzerFlags(fs *flag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if strings.Contains(f.Name, ".") {
			out = append(out, "-"+f.Name+"="+f.Value.String())
		}
	})
	return out
}
