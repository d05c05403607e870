package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// options are the standalone flags.
type options struct {
	json   bool
	fix    bool
	tests  bool
	enable map[string]*triState
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

func parseFlags(args []string) (*options, []string, error) {
	fs := flag.NewFlagSet("confinelint", flag.ContinueOnError)
	fs.Usage = func() { usage(); fs.PrintDefaults() }
	o := &options{enable: map[string]*triState{}}
	fs.BoolVar(&o.json, "json", false, "print findings as JSON")
	fs.BoolVar(&o.fix, "fix", false, "apply suggested fixes")
	fs.BoolVar(&o.tests, "test", true, "analyse test files too")
	for _, a := range analyzers {
		t := new(triState)
		o.enable[a.Name] = t
		fs.Var(t, a.Name, "enable "+a.Name+": "+firstLine(a.Doc))
		a.Flags.VisitAll(func(f *flag.Flag) {
			fs.Var(f.Value, a.Name+"."+f.Name, f.Usage)
		})
	}
	if err := fs.Parse(args); err != nil {
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
func standalone(args []string) int {
	o, patterns, err := parseFlags(args)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		return 1
	}
	if len(patterns) == 0 {
		usage()
		return 1
	}
	cfg := &packages.Config{Mode: packages.LoadAllSyntax | packages.NeedModule, Tests: o.tests}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "confinelint: %v\n", err)
		return 1
	}
	status := 0
	if n := printLoadErrors(os.Stderr, pkgs); n > 0 {
		status = 1
	}
	graph, err := checker.Analyze(o.selected(), pkgs, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "confinelint: %v\n", err)
		return 1
	}
	findings, errs := collect(graph)
	for _, e := range errs {
		fmt.Fprintf(os.Stderr, "confinelint: %v\n", e)
		status = 1
	}
	if o.fix {
		if err := applyFixes(findings); err != nil {
			fmt.Fprintf(os.Stderr, "confinelint: -fix: %v\n", err)
			status = 1
		}
	}
	if o.json {
		err = writeJSON(os.Stdout, findings)
	} else {
		err = writeText(os.Stdout, findings)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "confinelint: %v\n", err)
		return 1
	}
	if status == 0 && len(findings) > 0 {
		status = 3
	}
	return status
}

// printLoadErrors reports packages that failed to load or type-check; they
// are skipped, the rest is still analysed.
func printLoadErrors(w io.Writer, pkgs []*packages.Package) int {
	n := 0
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			fmt.Fprintf(w, "confinelint: package %s: %v (skipped)\n", p.PkgPath, e)
			n++
		}
	})
	return n
}

// collect gathers root diagnostics, deduplicated (a package and its test
// variant share files) and sorted by position, and the analyzers' errors.
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
			f := newFinding(act, d)
			if k := f.key(); !seen[k] {
				seen[k] = true
				out = append(out, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return out, errs
}
