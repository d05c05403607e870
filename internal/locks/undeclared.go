package locks

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/lockop"
)

// A function that leaves a lock held on every return is a lock helper,
// and without annotations its effect is inferred. For a lock that
// annotations name (a guard, or a function's requirement or effect) the
// code has opted into declared lock effects: there
// the contract's rule holds as written ("a return path that leaves a lock
// held that the function did not declare acquires"), as checklocks'
// "return with unexpected locks held".

// reportUndeclaredAcquires reports, at each return, a lock this function
// takes and leaves held on every return path without declaring it, when
// annotations name the lock. count is the number of returns
// definitely holding each path; declared the paths declared acquired.
func (w *walker) reportUndeclaredAcquires(count map[string]int, declared map[string]Hold) {
	// A closure run in place is its caller's code: the caller goes on
	// with what it leaves held and is judged at its own returns.
	if !w.report || len(w.rets) == 0 || lockerMethod(w.fn) || w.inPlaceClosure() {
		return
	}
	for _, h := range w.rets[0].state.holds {
		if _, ok := declared[h.Path]; ok || count[h.Path] != len(w.rets) || !w.undeclaredCandidate(h) {
			continue
		}
		for _, r := range w.rets {
			if w.returned(h.Path, r) || w.successReturn(r) {
				continue
			}
			w.reportUndeclaredAt(r, h, "")
		}
	}
	// Held exactly on the success returns (a try-acquire): the same rule,
	// at those returns.
	for _, t := range w.info.tries {
		if _, ok := declared[t.Path]; ok || t.Try || t.Class == "" || w.fresh(t.Path) || w.e.forced(t.Pos) || !w.e.guardsAnnotated(t.Class) {
			continue
		}
		for _, r := range w.rets {
			if h, held := r.state.find(t.Path); held && !h.Maybe && !w.returned(t.Path, r) {
				w.reportUndeclaredAt(r, h, " on success")
			}
		}
	}
}

// reportUndeclaredOnSome reports, at each explicit return holding it
// for sure, an annotated lock of paths: those the function leaves held on
// some returns only (the inconsistent return already reported at the
// function names the problem; this says which returns keep the lock, as
// checklocks' "return with unexpected locks held"). An implicit return
// would be reported on the function's line a second time: it is not.
func (w *walker) reportUndeclaredOnSome(paths []string) {
	if w.inPlaceClosure() || lockerMethod(w.fn) {
		return
	}
	for _, p := range paths {
		for _, r := range w.rets {
			h, ok := r.state.find(p)
			if !ok || r.implicit || !w.undeclaredCandidate(h) || w.returned(p, r) || w.successReturn(r) || w.e.foundAt(r.pos) {
				continue // a return already reported (a required lock let go) says enough
			}
			w.reportUndeclaredAt(r, h, " on this path")
		}
	}
}

func (w *walker) reportUndeclaredAt(r retState, h Hold, when string) {
	w.findAtReturn(r, "acquires", h.Name+" taken at "+w.e.at(h.Pos)+" is still held when the function returns"+when+", but the function does not declare it: "+
		h.Name+" is annotated (a guard or a function names it), so declare //confined:"+acquireVerb(h)+" "+w.declaredName(h)+" (or +checklocksacquire) or release it",
		takenHops(h)...)
}

// undeclaredCandidate says whether hold h, left held on every return,
// needs a declaration: taken here on every path (not by TryLock or a
// callee acquiring on success, not lent, not the caller's, not forced by a
// checklocksforce comment, not a second take already reported as a double
// lock, not the caller's lock let go and taken back around a slow call,
// as a "Locked" helper that may unlock and relock does),
// of an object the function does not create, and of a lock annotations
// name.
func (w *walker) undeclaredCandidate(h Hold) bool {
	if h.Maybe || h.Try || h.Lent || h.Loop || h.Extra > 0 || w.doubled[h.Path] || h.tagKey != "" || h.Class == "" || hasTry(w.info.tries, h.Path) || w.e.forced(h.Pos) {
		return false
	}
	if _, atEntry := w.entry.find(h.Path); atEntry {
		return false
	}
	if slices.ContainsFunc(w.info.releases, func(r Hold) bool { return r.Path == h.Path }) {
		return false // held by the caller on entry (its unlock here says so), held again on return
	}
	return !w.fresh(h.Path) && w.e.guardsAnnotated(h.Class)
}

// guardsAnnotated reports whether the lock of class is named by a guard
// of a field of its own struct or of a package var of this package, or by
// a function's declaration of this package.
func (e *engine) guardsAnnotated(class string) bool {
	if b, ok := e.annotatedLocks[class]; ok {
		return b
	}
	v := e.classVars[class]
	if v == nil {
		v = e.importedClassVar(class)
	}
	return v != nil && e.guardsAnnotatedVar(v)
}

// importedClassVar finds the field of another package's named struct a
// class key names ("pkgpath.Type.field"), when this function's package
// imports that package directly: a lock a callee leaves held, which this
// package never selects itself.
func (e *engine) importedClassVar(class string) *types.Var {
	for _, pkg := range e.p.Pass.Pkg.Imports() {
		rest, ok := strings.CutPrefix(class, pkg.Path()+".")
		if !ok {
			continue
		}
		typeName, field, ok := strings.Cut(rest, ".")
		if !ok || strings.Contains(field, ".") {
			return nil
		}
		tn, ok := pkg.Scope().Lookup(typeName).(*types.TypeName)
		if !ok {
			return nil
		}
		if st, ok := tn.Type().Underlying().(*types.Struct); ok {
			for f := range st.Fields() {
				if f.Name() == field {
					return f
				}
			}
		}
		return nil
	}
	return nil
}

// guardsAnnotatedVar is guardsAnnotated for the lock field or var v.
func (e *engine) guardsAnnotatedVar(v *types.Var) bool {
	class := lockop.ClassKey(v)
	if b, ok := e.annotatedLocks[class]; ok {
		return b
	}
	var candidates []*types.Var
	if v.IsField() {
		if owner := lockop.OwnerType(v); owner != nil {
			if st, ok := owner.Underlying().(*types.Struct); ok {
				for f := range st.Fields() {
					candidates = append(candidates, f)
				}
			}
		}
	}
	scope := e.p.Pass.Pkg.Scope()
	for _, name := range scope.Names() {
		if pv, ok := scope.Lookup(name).(*types.Var); ok {
			candidates = append(candidates, pv)
		}
	}
	found := false
	for _, f := range candidates {
		for _, it := range items(e.p.Decl(f)) {
			if directive.Verb(it.Verb) == directive.GuardedBy && it.LockClass == class {
				found = true
			}
		}
	}
	found = found || e.namedByFuncs(class)
	e.annotatedLocks[class] = found
	return found
}

// namedByFuncs reports whether a function of this package declares a
// requirement or effect on the lock of class (`+checklocks:n.mu` on a
// func, with no field guarded by it).
func (e *engine) namedByFuncs(class string) bool {
	if e.p.Directives == nil {
		return false
	}
	for obj := range e.p.Directives.Objects {
		if _, ok := obj.(*types.Func); !ok {
			continue
		}
		for _, it := range items(e.p.Decl(obj)) {
			if it.LockClass == class && directive.Verb(it.Verb) != directive.Ignore {
				return true
			}
		}
	}
	return false
}

func acquireVerb(h Hold) string {
	if h.Shared {
		return string(directive.AcquiresShared)
	}
	return string(directive.Acquires)
}

// declaredName is how a directive on this function names h's lock: a
// parameter's name and the fields after it ("tc.mu"), or the package
// var; the lock's class name when neither fits.
func (w *walker) declaredName(h Hold) string {
	root, rest := rootOf(h.Path)
	if i := paramIndex(root, "p"); i >= 0 && i < len(w.fn.Params) && !strings.Contains(rest, "[") {
		return w.fn.Params[i].Name() + rest
	}
	if v := w.e.classVars[h.Class]; v != nil && !v.IsField() && "g:"+lockop.ClassKey(v) == h.Path {
		return v.Name()
	}
	return h.Name
}

// lockerMethod reports whether fn is the Lock-like method of a type that
// implements sync.Locker (Lock, RLock, TryLock, NestedLock...): its name
// says what it leaves held (and checklocks users mark it with a
// checklocksignore comment anyway).
func lockerMethod(fn *ssa.Function) bool {
	recv := fn.Signature.Recv()
	if recv == nil || !lockop.IsLocker(recv.Type()) {
		return false
	}
	switch fn.Name() {
	case "Lock", "RLock", "TryLock", "TryRLock", "NestedLock":
		return true
	}
	return false
}
