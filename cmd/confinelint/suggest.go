package main

import (
	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/analyzers/suggest"
)

// withSuggest applies -suggest, which replaces the checks by the suggest
// analyzer (it is never part of the default set), and returns the other
// arguments and whether it did. go vet learns the flag from -flags, so the
// analyzer is listed there too.
func withSuggest(args []string) ([]string, bool) {
	for i, a := range args {
		switch a {
		case "-suggest", "--suggest", "-suggest=true", "--suggest=true":
			analyzers = []*analysis.Analyzer{suggest.Analyzer}
			return append(args[:i:i], args[i+1:]...), true
		case "-suggest=false", "--suggest=false":
			return append(args[:i:i], args[i+1:]...), false
		case "-flags", "--flags":
			analyzers = append(analyzers[:len(analyzers):len(analyzers)], suggest.Analyzer)
		}
	}
	return args, false
}
