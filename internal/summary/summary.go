// Package summary defines the one analyzer that owns every confinelint fact:
// it parses directives, finds goroutine roots, and runs the ownership, lock
// and commit engines over the package's SSA once. The three user-facing
// analyzers require it and only report.
package summary

import (
	"reflect"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/commits"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/locks"
	"github.com/confinelint/confinelint/internal/ownership"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// Analyzer computes Result and exports the facts of package facts.
var Analyzer = &analysis.Analyzer{
	Name:       "confinesummary",
	Doc:        "computes confinelint's directives, goroutine contexts and per-function summaries (not a check: the confined, lockorder and revokepath analyzers report)",
	URL:        "https://github.com/confinelint/confinelint",
	Requires:   []*analysis.Analyzer{buildssa.Analyzer},
	ResultType: reflect.TypeOf((*Result)(nil)),
	FactTypes:  facts.All(),
	Run:        run,
}

// Result is what the reporting analyzers read.
type Result struct {
	Package   *program.Package
	Contexts  *roots.Contexts
	Ownership *ownership.Summary
	Locks     *locks.Summary
	Commits   *commits.Summary
}

// Directives returns the package's parsed directives and their problems.
func (r *Result) Directives() *directive.Set { return r.Package.Directives }

func run(pass *analysis.Pass) (any, error) {
	set := directive.Collect(pass.Fset, pass.Files, pass.Pkg, pass.TypesInfo, importedRoles(pass))
	decls := exportDecls(pass, set)
	exportAsync(pass, set)
	p := program.New(pass, pass.ResultOf[buildssa.Analyzer].(*buildssa.SSA), set, decls)
	ctx := roots.Compute(p, roots.Default)
	exportParamFlows(pass, p, ctx.Objects)
	res := &Result{Package: p, Contexts: ctx}
	res.Ownership = ownership.Summarize(p, ctx)
	res.Locks = locks.Summarize(p, ctx)
	res.Commits = commits.Summarize(p, ctx, res.Locks)
	return res, nil
}

// importedRoles answers whether a dependency declares an entry for role.
func importedRoles(pass *analysis.Pass) func(string) bool {
	var known map[string]bool
	return func(role string) bool {
		if known == nil {
			known = map[string]bool{}
			for _, f := range pass.AllPackageFacts() {
				if r, ok := f.Fact.(*facts.Roles); ok {
					for _, n := range r.Names {
						known[n] = true
					}
				}
			}
		}
		return known[role]
	}
}
