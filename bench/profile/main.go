// Command profile runs confinelint's analyzers (or the floor analyzer) over
// packages in one process, the way the standalone mode does, and writes a
// CPU profile, so that the cost go vet spreads over hundreds of short vet
// tool processes can be attributed to functions. It also prints the time
// spent per analyzer, summed over every package (dependencies and the
// standard library included).
//
//	profile [-tool confinelint|floor] [-cpuprofile F] [-memprofile F] [-test] packages...
//
// Run it in the benchmark corpus module directory.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"time"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/confinelint/confinelint/analyzers/confined"
	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/analyzers/revokepath"
	"github.com/confinelint/confinelint/bench/internal/floor"
)

func main() {
	tool := flag.String("tool", "confinelint", "confinelint or floor")
	cpu := flag.String("cpuprofile", "", "write a CPU profile of the analysis (not the load) here")
	mem := flag.String("memprofile", "", "write an allocation profile here")
	tests := flag.Bool("test", true, "include test files, as go vet does")
	seq := flag.Bool("seq", false, "run actions sequentially (cleaner per-analyzer times)")
	flag.Parse()

	var as []*analysis.Analyzer
	switch *tool {
	case "confinelint":
		as = []*analysis.Analyzer{confined.Analyzer, lockorder.Analyzer, revokepath.Analyzer}
	case "floor":
		as = []*analysis.Analyzer{floor.Analyzer}
	default:
		fmt.Fprintln(os.Stderr, "unknown -tool", *tool)
		os.Exit(2)
	}

	t0 := time.Now()
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Tests: *tests}
	pkgs, err := packages.Load(cfg, flag.Args()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nerr := packages.PrintErrors(pkgs)
	all := 0
	packages.Visit(pkgs, nil, func(*packages.Package) { all++ })
	fmt.Printf("loaded %d root packages (%d with dependencies) in %.1fs, %d load errors\n",
		len(pkgs), all, time.Since(t0).Seconds(), nerr)

	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
	}
	t1 := time.Now()
	g, err := checker.Analyze(as, pkgs, &checker.Options{Sequential: *seq})
	if *cpu != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	elapsed := time.Since(t1)
	if *mem != "" {
		f, err := os.Create(*mem)
		if err == nil {
			runtime.GC()
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}

	type agg struct {
		d     time.Duration
		n     int
		diags int
		errs  int
		slow  []*checker.Action
	}
	per := map[string]*agg{}
	for act := range g.All() {
		a := per[act.Analyzer.Name]
		if a == nil {
			a = new(agg)
			per[act.Analyzer.Name] = a
		}
		a.d += act.Duration
		a.n++
		a.diags += len(act.Diagnostics)
		if act.Err != nil {
			a.errs++
			if a.errs <= 3 {
				fmt.Fprintf(os.Stderr, "%s: %v\n", act, act.Err)
			}
		}
		a.slow = append(a.slow, act)
	}
	var names []string
	for n := range per {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return per[names[i]].d > per[names[j]].d })
	fmt.Printf("analysis %.1fs wall (sequential=%v)\n\n", elapsed.Seconds(), *seq)
	fmt.Println("| analyzer | packages | summed time s | diagnostics | errors | slowest packages |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, n := range names {
		a := per[n]
		sort.Slice(a.slow, func(i, j int) bool { return a.slow[i].Duration > a.slow[j].Duration })
		s := ""
		for i, act := range a.slow {
			if i == 3 {
				break
			}
			s += fmt.Sprintf("%s %.2fs; ", act.Package.PkgPath, act.Duration.Seconds())
		}
		fmt.Printf("| %s | %d | %.2f | %d | %d | %s |\n", n, a.n, a.d.Seconds(), a.diags, a.errs, s)
	}
}
