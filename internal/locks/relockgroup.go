package locks

import (
	"go/token"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

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
func (e *engine) findRelock(at, held token.Pos, rule, what, since string, first ...diag.Hop) {
	if e.underSameHold(at, held, rule, what) {
		return
	}
	if !helperChain(what) {
		e.findUnderHold(at, held, rule, what, since, first...)
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
	e.findUnderHold(at, held, rule, what, since, first...)
	if len(e.findings) > n {
		if e.relocks == nil {
			e.relocks = map[string]int{}
		}
		e.relocks[key] = n
	}
}

// Several calls made under one hold that each take the lock again are one
// problem too: the hold (rudd's allnodesfrom read-locking the tables and
// calling four helpers that read-lock them again). The first call found
// is the finding; the others are its related positions, and its message
// counts them.

// relockHold is the finding of the re-locks under one hold.
type relockHold struct {
	finding int    // index in e.findings
	msg     string // its message before the count
	more    int
}

// relockHoldKey names a hold in the function walked: a hold inside a
// callee (a helper that runs its argument under its lock) is each
// caller's own.
type relockHoldKey struct {
	fn         *ssa.Function
	held       token.Pos
	rule, lock string
}

func (e *engine) relockHold(held token.Pos, rule, what string) relockHoldKey {
	lock, _, _ := strings.Cut(what, " by ")
	lock, _, _ = strings.Cut(lock, " locked again")
	return relockHoldKey{e.cur, held, rule, lock}
}

// findUnderHold reports a re-lock and remembers it as its hold's finding.
func (e *engine) findUnderHold(at, held token.Pos, rule, what, since string, first ...diag.Hop) {
	n := len(e.findings)
	e.find(at, rule, what+since, first...)
	if len(e.findings) > n && held.IsValid() {
		e.keepHoldFinding(e.relockHold(held, rule, what), n, what+since)
	}
}

// keepHoldFinding remembers finding n, whose message is msg, as the one
// of the hold key names.
func (e *engine) keepHoldFinding(key relockHoldKey, n int, msg string) {
	if e.relockHolds == nil {
		e.relockHolds = map[relockHoldKey]*relockHold{}
	}
	e.relockHolds[key] = &relockHold{finding: n, msg: msg}
}

// addUnderHold makes at a related position of g's finding, what saying
// what happens there, and counts it in the message: "; N" and one (N is
// 1) or many.
func (e *engine) addUnderHold(g *relockHold, at token.Pos, what, one, many string) {
	f := &e.findings[g.finding]
	g.more++
	f.Also = append(f.Also, at)
	f.Chain = append(f.Chain, diag.Hop{Pos: at, What: what})
	tail := one
	if g.more > 1 {
		tail = many
	}
	f.Message = g.msg + "; " + strconv.Itoa(g.more) + tail
}

// underSameHold adds the re-lock at at to the finding of its hold, when
// another call under that hold was reported already.
func (e *engine) underSameHold(at, held token.Pos, rule, what string) bool {
	g := e.relockHolds[e.relockHold(held, rule, what)]
	if g == nil || g.finding >= len(e.findings) {
		return false
	}
	f := &e.findings[g.finding]
	if f.Pos == at {
		// The same call taking the lock again a second time further on
		// (go-redis' rebalance: RLock, RUnlock, later Lock): the first
		// take blocks already. One finding.
		return true
	}
	if !slices.Contains(f.Also, at) {
		e.addUnderHold(g, at, "taken again here too, under the same hold: "+what,
			" more call under this hold take it again", " more calls under this hold take it again")
	}
	return true
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
