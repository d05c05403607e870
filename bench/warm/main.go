// Command warm is a -vettool that does nothing. The benchmark runs
// `go vet -vettool=warm` once to fill the build cache with everything go vet
// compiles (test variants of the vetted packages and their test-only
// dependencies) without caching any result of the tools it measures: the
// go command keys vet results by the tool's ID, and warm's is its own.
package main

import (
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/unitchecker"
)

var analyzer = &analysis.Analyzer{
	Name: "warm",
	Doc:  "does nothing",
	Run:  func(*analysis.Pass) (any, error) { return nil, nil },
}

func main() { unitchecker.Main(analyzer) }
