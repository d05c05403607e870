package ownership

import (
	"fmt"
	"go/token"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/roots"
)

// checkUndeclared applies rule 2: an exported or escaping function whose
// callers are unknown cannot inherit a role, so if it touches ROLE state
// (itself or through unexported callees) it must declare ROLE. The
// finding sits on the func line and carries a fix adding the directive.
// Escaping closures cannot carry a directive and are not reported.
func (e *engine) checkUndeclared() {
	for _, r := range e.roots {
		fn := r.Func
		if r.Kind != roots.KindUnknown || fn.Parent() != nil || fn.Name() == "init" || e.isTestFunc(fn) {
			continue
		}
		t, ok := firstUnchecked(e.summary(fn))
		if !ok {
			continue
		}
		why := "its address escapes"
		if isExported(fn) {
			why = "it is exported"
		}
		msg := fmt.Sprintf("%s touches %s state (%s %s: %s) but declares no role, and %s so its callers are unknown: declare it %s",
			e.name(fn), t.a.role, t.a.state, t.a.kind.verb(), e.chain(nil, t), why, controlDirective(t.a.role))
		pos, fix := e.funcLine(fn), []analysis.SuggestedFix(nil)
		if fd := diag.EnclosingFunc(e.p.Pass.Files, fn.Pos()); pos != fn.Pos() && fd != nil {
			// Declare and assert together: with the Assert the fixed
			// function is complete, and the next run finds nothing to add.
			edits := []analysis.TextEdit{declareEdit(fd, t.a.role)}
			if assert, _, ok := e.ownerCallEdit(fn, "Assert", t.a.role); ok {
				edits = append(edits, assert)
			}
			fix = fixes("declare "+e.name(fn)+" "+controlDirective(t.a.role), edits...)
		}
		e.findings = append(e.findings, diag.Finding{Pos: pos, Fallback: fn.Pos(), Rule: "undeclared-role", Message: msg, Fixes: fix})
	}
}

// checkRuntime applies rule 5: an entry binds its owner, and an exported
// or escaping //confined:control function asserts it, in its body or in a
// function it calls synchronously.
func (e *engine) checkRuntime() {
	for _, r := range e.roots {
		fn := r.Func
		role := orDefault(r.Role)
		switch r.Kind {
		case roots.KindEntry:
			if !e.calledFrom(r, e.binds) {
				e.findings = append(e.findings, diag.Finding{Pos: e.funcLine(fn), Fallback: fn.Pos(), Rule: "missing-bind",
					Message: fmt.Sprintf("%s is the //confined:entry of %s's goroutine but never calls Bind() on its confine.Owner, so runtime assertions cannot check it", e.name(fn), role),
					Fixes:   e.ownerCallFix(fn, "Bind", role)})
			}
		case roots.KindDeclared:
			_, control := e.p.FuncDecl(fn).Has(string(directive.Control))
			if control && (isExported(fn) || e.ctx.Escapes(fn)) && !e.calledFrom(r, e.asserts) {
				e.findings = append(e.findings, diag.Finding{Pos: e.funcLine(fn), Fallback: fn.Pos(), Rule: "missing-assert",
					Message: fmt.Sprintf("%s is %s and callable from code the analysis cannot see, but never calls Assert() on its confine.Owner", e.name(fn), controlDirective(role)),
					Fixes:   e.ownerCallFix(fn, "Assert", role)})
			}
		case roots.KindSerialized:
			if !e.calledFrom(r, e.asserts) {
				e.findings = append(e.findings, diag.Finding{Pos: e.funcLine(fn), Fallback: fn.Pos(), Rule: "missing-assert",
					Message: fmt.Sprintf("%s is //confined:serialized %s and runs on another goroutine, but never calls Assert() on its confine.Owner, so nothing checks at run time that %s lent it the owner (Lend/Reclaim)", e.name(fn), role, role),
					Fixes:   e.ownerCallFix(fn, "Assert", role)})
			}
		}
	}
}

// ownerCallFix is the fix adding "x.owner.method()" at the top of fn.
func (e *engine) ownerCallFix(fn *ssa.Function, method, role string) []analysis.SuggestedFix {
	edit, stmt, ok := e.ownerCallEdit(fn, method, role)
	if !ok {
		return nil
	}
	return fixes("call "+stmt+" at the top of "+e.name(fn), edit)
}

// calledFrom reports whether a function in set runs on root r itself,
// directly or through synchronous calls.
func (e *engine) calledFrom(r *roots.Root, set map[*ssa.Function]bool) bool {
	for _, rc := range e.byRoot[r] {
		if set[rc.Func()] {
			return true
		}
	}
	return false
}

// funcLine is the position of fn's func keyword, where the directive goes.
func (e *engine) funcLine(fn *ssa.Function) token.Pos {
	return diag.FuncKeyword(e.p.Pass.Files, fn.Pos())
}

func isExported(fn *ssa.Function) bool {
	return fn.Parent() == nil && fn.Object() != nil && fn.Object().Exported()
}

// firstUnchecked returns the first touch that no runtime assertion covers.
func firstUnchecked(ts []touch) (touch, bool) {
	for _, t := range ts {
		if !t.a.checked {
			return t, true
		}
	}
	return touch{}, false
}

// isTestFunc reports whether fn is a test, benchmark, fuzz test or example
// in a _test.go file: the testing package runs each on a goroutine of its
// own that owns what the test builds, so rule 2 does not apply.
func (e *engine) isTestFunc(fn *ssa.Function) bool {
	if !strings.HasSuffix(e.p.Pass.Fset.Position(fn.Pos()).Filename, "_test.go") {
		return false
	}
	for _, prefix := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(fn.Name(), prefix) {
			return true
		}
	}
	return false
}
