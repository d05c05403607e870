package locks

import (
	"go/token"
	"strings"

	"github.com/confinelint/confinelint/internal/diag"
)

// findRelock reports a lock taken again, what says how (the lock and the
// calls down to the take), held since when. A take through an
// unexported helper and on down that the package already reported the
// same way, from another call site of the helper, is one problem: the
// helper, called with the lock held, takes it again further down (a
// state setter firing a handler that reads the breaker, called from four
// locked methods). The later sites go to the first finding as related
// positions, each silencing it as its own finding would. An exported or
// locking function called under the lock is each caller's mistake: one
// finding per call.
func (e *engine) findRelock(at token.Pos, rule, what, since string, first ...diag.Hop) {
	if !helperChain(what) {
		e.find(at, rule, what+since, first...)
		return
	}
	key := rule + "\x00" + what
	if i, ok := e.relocks[key]; ok && i < len(e.findings) && e.findings[i].Pos != at {
		f := &e.findings[i]
		f.Also = append(f.Also, at)
		f.Chain = append(f.Chain, diag.Hop{Pos: at, What: "the same call reached with the lock held here"})
		return
	}
	n := len(e.findings)
	e.find(at, rule, what+since, first...)
	if len(e.findings) > n {
		if e.relocks == nil {
			e.relocks = map[string]int{}
		}
		e.relocks[key] = n
	}
}

// helperChain reports whether a re-lock description ("M.mu locked again
// by T.helper -> U.handler (at f.go:3)") goes through an unexported
// helper (or a closure) before the function that takes the lock.
func helperChain(what string) bool {
	_, chain, ok := strings.Cut(what, " by ")
	if !ok {
		return false
	}
	chain, _, _ = strings.Cut(chain, " (at ")
	hop, rest, ok := strings.Cut(chain, " -> ")
	if !ok || rest == "" {
		return false
	}
	name := hop[strings.LastIndex(hop, ".")+1:]
	return name != "" && !token.IsExported(name)
}
