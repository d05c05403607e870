// Command floor is the benchmark's lower bound for a -vettool shaped like
// confinelint; see package floor.
package main

import (
	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/confinelint/confinelint/bench/internal/floor"
)

func main() { unitchecker.Main(floor.Analyzer) }
