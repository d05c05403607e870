// Package ownership is the summary engine behind the confined analyzer:
// which role-confined state each function touches, on which goroutine
// contexts, through which chain of calls.
package ownership

import (
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// Summary is the ownership result for one package.
type Summary struct{}

// Summarize computes the package's ownership summary and exports its facts.
func Summarize(p *program.Package, ctx *roots.Contexts) *Summary {
	return &Summary{}
}
