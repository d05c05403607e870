package ownership

import (
	"fmt"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// callAccesses returns what a call of another package's function does to
// confined state, as seen from the caller: calling a function confined to
// a role is an access of that role; calling an undeclared exported
// function touches what its Ownership fact lists.
func (e *engine) callAccesses(fn *ssa.Function, in ssa.CallInstruction) []access {
	callee := in.Common().StaticCallee()
	if callee == nil {
		return nil
	}
	if o := callee.Origin(); o != nil {
		callee = o
	}
	obj, ok := callee.Object().(*types.Func)
	if !ok || obj.Pkg() == nil || obj.Pkg() == e.p.Pass.Pkg {
		return nil // calls within the package: see localAccesses
	}
	if commitOnly(e.p.FuncDecl(callee)) {
		return nil // revokepath reports a commit called off its role
	}
	if role, ok := e.declaredRole(callee); ok {
		name := program.FuncName(callee, e.p.Pass.Pkg)
		// Rule 5 obliges another package's role functions to assert.
		return []access{{role: role, kind: call, pos: posOf(fn, in), state: name, key: program.FuncName(callee, nil), checked: true}}
	}
	var own facts.Ownership
	if !e.p.Pass.ImportObjectFact(obj, &own) {
		return nil
	}
	var out []access
	for _, a := range own.Accesses {
		k := read
		switch {
		case a.Call:
			k = call
		case a.Write:
			k = write
		}
		out = append(out, access{role: a.Role, kind: k, pos: posOf(fn, in), state: a.State, key: a.State, via: a.Chain})
	}
	return out
}

// localAccesses returns fn's calls of this package's role functions, by
// the call edges of package roots: static calls, interface calls of the
// package's implementations, and function values passed to synchronous
// calls. Calls of undeclared exported or escaping functions are kept in
// localCalls, to expand their summaries once all exist.
func (e *engine) localAccesses(fn *ssa.Function) []access {
	var out []access
	for _, edge := range e.ctx.Calls(fn) {
		pos := edge.Site
		if !pos.IsValid() {
			pos = fn.Pos()
		}
		if commitOnly(e.p.FuncDecl(edge.Callee)) {
			continue // revokepath reports a commit called off its role
		}
		if role, ok := e.declaredRole(edge.Callee); ok {
			out = append(out, access{role: role, kind: call, pos: pos, state: e.name(edge.Callee), key: program.FuncName(edge.Callee, nil), checked: e.asserts[edge.Callee]})
			continue
		}
		e.localCalls[fn] = append(e.localCalls[fn], localCall{callee: edge.Callee, pos: pos})
	}
	return out
}

// commitOnly reports whether d declares a commit and no other role: calling
// it on a foreign goroutine is revokepath's inline-commit finding, so
// confined stays silent there (one finding per problem). Its body is still
// checked as running on its role.
func commitOnly(d *facts.Decl) bool {
	if _, ok := d.Has(string(directive.Commit)); !ok {
		return false
	}
	_, control := d.Has(string(directive.Control))
	_, drain := d.Has(string(directive.Drain))
	return !control && !drain
}

// localCall is a call of one of this package's functions, kept to expand
// the callee's summary at the call site when it is an undeclared root.
type localCall struct {
	callee *ssa.Function
	pos    token.Pos
}

// declaredRole is the role fn is confined to: declared (control, drain,
// commit), implied by a runtime Assert here, or by an imported fact.
func (e *engine) declaredRole(fn *ssa.Function) (string, bool) {
	if role, ok := roots.DeclaredRole(e.p.FuncDecl(fn)); ok {
		return orDefault(role), true
	}
	if role, ok := e.implied[fn]; ok {
		return role, true
	}
	if obj, ok := fn.Object().(*types.Func); ok && obj.Pkg() != nil && obj.Pkg() != e.p.Pass.Pkg {
		var own facts.Ownership
		if e.p.Pass.ImportObjectFact(obj.Origin(), &own) && own.Implied != "" {
			return own.Implied, true
		}
	}
	return "", false
}

// checkGoCall reports a go statement that starts another package's role
// function: it runs on the new goroutine, whatever the caller's context.
// (A go statement on this package's function is a root of package roots,
// and that function's accesses are judged on it.)
func (e *engine) checkGoCall(fn *ssa.Function, in *ssa.Go) {
	for _, a := range e.callAccesses(fn, in) {
		if a.kind != call || a.via != nil {
			continue
		}
		e.findings = append(e.findings, diag.Finding{Pos: a.pos, Fallback: fn.Pos(), Rule: "foreign-access",
			Message: fmt.Sprintf("%s is confined to %s but called on the goroutine started by the go statement: go %s", a.state, a.role, a.state)})
	}
}
