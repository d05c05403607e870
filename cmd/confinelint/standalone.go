package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/confinelint/confinelint/analyzers/suggest"
)

// options are the standalone flags.
type options struct {
	format        string // text, json or sarif
	fix           bool
	tests         bool
	tags          string
	baselineWrite string
	baselineCheck string
	enable        map[string]*triState
	analyzerFlags []string // -NAME.FLAG=VALUE as set, for go vet's tool
}

// formatFlag is -json: an alias for -f json.
type formatFlag struct{ o *options }

func (f formatFlag) String() string   { return "false" }
func (f formatFlag) IsBoolFlag() bool { return true }
func (f formatFlag) Set(v string) error {
	switch v {
	case "true", "1", "t":
		f.o.format = "json"
	case "false", "0", "f":
	default:
		return fmt.Errorf("want true or false, got %q", v)
	}
	return nil
}

// triState is an analyzer enable flag: unset, true or false.
type triState struct{ set, on bool }

func (t *triState) String() string   { return fmt.Sprint(t.on) }
func (t *triState) IsBoolFlag() bool { return true }
func (t *triState) Set(v string) error {
	t.set = true
	t.on = v == "true" || v == "1" || v == "t"
	if !t.on && v != "false" && v != "0" && v != "f" {
		return fmt.Errorf("want true or false, got %q", v)
	}
	return nil
}

// newFlagSet defines the standalone flags, storing them in o.
func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("confinelint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(); fs.PrintDefaults() }
	fs.StringVar(&o.format, "f", "text", "output format: text, json or sarif (SARIF 2.1.0)")
	fs.Var(formatFlag{o}, "json", "print findings as JSON (same as -f json)")
	fs.StringVar(&o.baselineWrite, "baseline-write", "", "record the current findings in `FILE` and exit 0")
	fs.StringVar(&o.baselineCheck, "baseline-check", "", "report only findings not recorded in the baseline `FILE`")
	fs.BoolVar(&o.fix, "fix", false, "apply suggested fixes")
	fs.BoolVar(&o.tests, "test", true, "analyse test files too")
	fs.StringVar(&o.tags, "tags", "", "comma-separated build tags, as for go build")
	if !slices.Contains(analyzers, suggest.Analyzer) {
		// main takes -suggest off the arguments first (see withSuggest);
		// defined here for -h and for the docs' commands.
		fs.Bool("suggest", false, "propose annotations for unannotated code instead of checking (with -fix: write them); exit status 0")
	}
	for _, a := range analyzers {
		t := new(triState)
		o.enable[a.Name] = t
		fs.Var(t, a.Name, "enable "+a.Name+": "+firstLine(a.Doc))
		a.Flags.VisitAll(func(f *flag.Flag) {
			fs.Var(f.Value, a.Name+"."+f.Name, f.Usage)
		})
	}
	return fs
}

func parseFlags(args []string, stderr io.Writer) (*options, []string, error) {
	o := &options{enable: map[string]*triState{}}
	fs := newFlagSet(o, stderr)
	err := fs.Parse(args)
	if err != nil {
		return nil, nil, err
	}
	o.analyzerFlags = analyzerFlags(fs)
	switch {
	case o.format != "text" && o.format != "json" && o.format != "sarif":
		err = fmt.Errorf("-f %s: want text, json or sarif", o.format)
	case o.baselineWrite != "" && o.baselineCheck != "":
		err = fmt.Errorf("-baseline-write and -baseline-check are exclusive")
	}
	if err != nil {
		fmt.Fprintf(stderr, "confinelint: %v\n", err)
		return nil, nil, err
	}
	return o, fs.Args(), nil
}

// selected applies the enable flags the way go vet does: naming any
// analyzer with true runs only those; false removes one.
func (o *options) selected() []*analysis.Analyzer {
	anyOn := false
	for _, t := range o.enable {
		anyOn = anyOn || (t.set && t.on)
	}
	var out []*analysis.Analyzer
	for _, a := range analyzers {
		t := o.enable[a.Name]
		if (anyOn && t.on) || (!anyOn && !(t.set && !t.on)) {
			out = append(out, a)
		}
	}
	return out
}

// standalone loads the packages named by args, analyses them and prints
// the findings. It returns the exit status.
func standalone(args []string) int { return run(args, os.Stdout, os.Stderr) }

// Exit statuses.
const (
	exitClean    = 0
	exitError    = 1
	exitFindings = 3
)

func run(args []string, stdout, stderr io.Writer) int {
	o, patterns, err := parseFlags(args, stderr)
	if err == flag.ErrHelp {
		return exitClean
	}
	if err != nil {
		return exitError
	}
	if len(patterns) == 0 {
		usage()
		return exitError
	}
	findings, status := analyze(o, patterns, stderr)
	if status == exitError && findings == nil {
		return exitError
	}
	src := newSources()
	if o.baselineWrite != "" {
		if err := writeBaseline(o.baselineWrite, findings, src); err != nil {
			fmt.Fprintf(stderr, "confinelint: -baseline-write: %v\n", err)
			return exitError
		}
		fmt.Fprintf(stderr, "confinelint: recorded %d findings in %s\n", len(findings), o.baselineWrite)
		return status
	}
	if o.baselineCheck != "" {
		fresh, stale, err := filterBaseline(o.baselineCheck, findings, src)
		if err != nil {
			fmt.Fprintf(stderr, "confinelint: -baseline-check: %v\n", err)
			return exitError
		}
		if stale > 0 {
			fmt.Fprintf(stderr, "confinelint: %d baseline findings are gone; rewrite %s with -baseline-write\n", stale, o.baselineCheck)
		}
		findings = fresh
	}
	switch o.format {
	case "json":
		err = writeJSON(stdout, findings)
	case "sarif":
		err = writeSARIF(stdout, findings, src)
	default:
		err = writeText(stdout, findings)
	}
	if err != nil {
		fmt.Fprintf(stderr, "confinelint: %v\n", err)
		return exitError
	}
	if status == exitClean && len(findings) > 0 {
		status = exitFindings
	}
	return status
}

// analyze analyses the packages and applies -fix. The status is exitError
// when something could not be analysed; findings is nil when nothing could.
func analyze(o *options, patterns []string, stderr io.Writer) ([]finding, int) {
	analyse := analyzeWithVet
	if os.Getenv(driverEnv) == driverInProcess {
		analyse = analyzeInProcess
	}
	findings, errs, status, ok := analyse(o, patterns, stderr)
	if !ok {
		return nil, exitError
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	for _, e := range errs {
		fmt.Fprintf(stderr, "confinelint: %v\n", e)
		status = exitError
	}
	if o.fix {
		if err := applyFixes(findings); err != nil {
			fmt.Fprintf(stderr, "confinelint: -fix: %v\n", err)
			status = exitError
		}
	}
	if findings == nil {
		findings = []finding{}
	}
	return findings, status
}

// CONFINELINT_DRIVER=inprocess selects the in-process driver: every
// package, dependencies included, loaded from source and analysed in this
// process (go/analysis/checker). It needs memory for the whole tree and
// caches nothing; the default runs go vet (vetdriver.go).
const (
	driverEnv       = "CONFINELINT_DRIVER"
	driverInProcess = "inprocess"
)

// analyzeInProcess loads the packages with go/packages and analyses them
// with go/analysis/checker. It prints load errors and returns the sorted
// findings, the analysers' errors, the status so far, and ok=false when
// nothing could be analysed.
func analyzeInProcess(o *options, patterns []string, stderr io.Writer) ([]finding, []error, int, bool) {
	return inProcess(o, patterns, stderr, true)
}

// inProcess loads and analyses the packages in this process; checkAsync
// says whether -confined.async is checked against them (the go vet driver
// checks it against the whole build before handing some packages here).
func inProcess(o *options, patterns []string, stderr io.Writer, checkAsync bool) ([]finding, []error, int, bool) {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax | packages.NeedModule, Tests: o.tests}
	if o.tags != "" {
		cfg.BuildFlags = []string{"-tags=" + o.tags}
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		fmt.Fprintf(stderr, "confinelint: %v\n", err)
		return nil, nil, exitError, false
	}
	status := exitClean
	if n := printLoadErrors(stderr, pkgs); n > 0 {
		status = exitError
	}
	if err := checkAsyncFlag(pkgs); checkAsync && err != nil {
		fmt.Fprintf(stderr, "confinelint: %v\n", err)
		return nil, nil, exitError, false
	}
	// A root that imports a package with errors cannot be analysed: say
	// so, and do not analyse its dependencies for it (a cgo dependency
	// that does not build would otherwise cost a whole tree of analysis).
	roots, errs := analysable(pkgs)
	if len(roots) == 0 {
		return nil, errs, status, true
	}
	graph, err := checker.Analyze(o.selected(), roots, nil)
	if err != nil {
		fmt.Fprintf(stderr, "confinelint: %v\n", err)
		return nil, nil, exitError, false
	}
	findings, more := collect(graph)
	return findings, append(errs, more...), status, true
}

// analysable returns the roots that can be analysed, and an error naming
// each of the others that imports a package with errors (a package with
// errors of its own was reported by printLoadErrors).
func analysable(pkgs []*packages.Package) ([]*packages.Package, []error) {
	var roots []*packages.Package
	var errs []error
	seen := map[string]bool{}
	memo := map[*packages.Package]*packages.Package{}
	for _, p := range pkgs {
		switch b := brokenDep(p, memo); {
		case b == nil:
			roots = append(roots, p)
		case b != p:
			msg := fmt.Sprintf("package %s: not analysed: it imports %s, which has errors", p.PkgPath, b.PkgPath)
			if !seen[msg] {
				seen[msg] = true
				errs = append(errs, errors.New(msg))
			}
		}
	}
	return roots, errs
}

// printLoadErrors reports packages that failed to load or type-check; they
// are skipped, the rest is still analysed.
// A package and its test variant share errors: each line is printed once.
func printLoadErrors(w io.Writer, pkgs []*packages.Package) int {
	n := 0
	printed := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			line := fmt.Sprintf("confinelint: package %s: %v (skipped)\n", p.PkgPath, e)
			if !printed[line] {
				printed[line] = true
				fmt.Fprint(w, line)
			}
			n++
		}
	})
	return n
}

// brokenDep returns the package with load or type errors that p is or
// (transitively) imports, or nil. Such a package cannot be analysed: its
// facts, or its dependency's, are missing.
func brokenDep(p *packages.Package, memo map[*packages.Package]*packages.Package) *packages.Package {
	if b, ok := memo[p]; ok {
		return b
	}
	memo[p] = nil // cycles cannot happen; this also bounds the walk
	if len(p.Errors) > 0 {
		memo[p] = p
		return p
	}
	paths := make([]string, 0, len(p.Imports))
	for path := range p.Imports {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		if b := brokenDep(p.Imports[path], memo); b != nil {
			memo[p] = b
			return b
		}
	}
	return nil
}

// collect gathers root diagnostics, deduplicated (a package and its test
// variant share files) and sorted by position, and the analyzers' errors.
// Its roots are analysable ones: no package with load errors is among
// them or their imports.
func collect(g *checker.Graph) ([]finding, []error) {
	var out []finding
	var errs []error
	seen := map[string]bool{}
	for act := range g.All() {
		if act.Err != nil && act.IsRoot {
			errs = append(errs, fmt.Errorf("%s: %v", act, act.Err))
		}
		if !act.IsRoot {
			continue
		}
		for _, d := range act.Diagnostics {
			f := newFinding(act.Analyzer.Name, act.Package.Fset, d)
			if k := f.key(); !seen[k] {
				seen[k] = true
				out = append(out, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out, errs
}
