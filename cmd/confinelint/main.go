// Command confinelint checks goroutine ownership, lock discipline and
// commit/drain ordering in Go code.
//
// It runs in two modes:
//
//	confinelint [flags] ./...              standalone (text, JSON, SARIF, baselines, fixes)
//	go vet -vettool=$(which confinelint) ./...   as go vet's analysis tool
//
// The vet mode is chosen when go vet calls it (-V=full, -flags, or a *.cfg
// file); everything else is standalone, which runs go vet with this binary
// as the tool (vetdriver.go).
package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/analyzers/confined"
	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/analyzers/revokepath"
)

// analyzers is every check, in the order -h lists them.
var analyzers = []*analysis.Analyzer{confined.Analyzer, lockorder.Analyzer, revokepath.Analyzer}

func main() {
	args, err := chdir(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "confinelint: %v\n", err)
		os.Exit(1)
	}
	args, suggesting := withSuggest(args)
	if vetMode(args) {
		if slices.Contains(args, "-V=full") || slices.Contains(args, "--V=full") {
			os.Exit(printVersion(os.Stdout))
		}
		vetTool(args)
		return
	}
	status := standalone(args)
	if suggesting && status == exitFindings {
		status = exitClean // suggestions are no findings
	}
	os.Exit(status)
}

// chdir handles a leading "-C dir" as the go command does: the run happens
// in dir (so "go run ./cmd/confinelint -C examples ./..." analyses the
// example module).
func chdir(args []string) ([]string, error) {
	if len(args) >= 2 && (args[0] == "-C" || args[0] == "--C") {
		return args[2:], os.Chdir(args[1])
	}
	if len(args) >= 1 && (strings.HasPrefix(args[0], "-C=") || strings.HasPrefix(args[0], "--C=")) {
		return args[1:], os.Chdir(args[0][strings.Index(args[0], "=")+1:])
	}
	return args, nil
}

// vetMode recognises go vet's calls to a -vettool.
func vetMode(args []string) bool {
	for _, a := range args {
		if a == "-V=full" || a == "--V=full" || a == "-flags" || a == "--flags" {
			return true
		}
	}
	return len(args) > 0 && strings.HasSuffix(args[len(args)-1], ".cfg")
}

func usage() {
	fmt.Fprintf(os.Stderr, `confinelint checks goroutine ownership and lock discipline.

Usage:
  confinelint [-C dir] [flags] packages...   e.g. confinelint ./...
  confinelint -suggest [-fix] packages...    propose annotations for unannotated code (never errors)
  go vet -vettool=$(command -v confinelint) [vet flags] packages...

Analyzers (enable only some with -NAME, disable with -NAME=false):
`)
	for _, a := range analyzers {
		fmt.Fprintf(os.Stderr, "  %-11s %s\n", a.Name, firstLine(a.Doc))
	}
	fmt.Fprintf(os.Stderr, "\nExit status: 0 no findings, 3 findings, 1 the tool could not run (load or type errors are printed and the other packages still analysed).\n\nFlags:\n")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
