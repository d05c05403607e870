// Package locks is the summary engine behind the lockorder analyzer: lock
// state along SSA paths, per-function lock effects, and acquired-while-
// holding edges.
package locks

import (
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// Summary is the lock result for one package.
type Summary struct{}

// Summarize computes the package's lock summary and exports its facts.
func Summarize(p *program.Package, ctx *roots.Contexts) *Summary {
	return &Summary{}
}
