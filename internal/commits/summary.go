// Package commits is the summary engine behind the revokepath analyzer:
// drain-before-commit obligations along every path from a root.
package commits

import (
	"github.com/confinelint/confinelint/internal/locks"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// Summary is the commit result for one package.
type Summary struct{}

// Summarize computes the package's commit obligations and exports facts.
func Summarize(p *program.Package, ctx *roots.Contexts, lk *locks.Summary) *Summary {
	return &Summary{}
}
