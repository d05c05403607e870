package locks

import (
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// guard is what a field or package var declares about its accesses.
type guard struct {
	locks  []facts.DeclItem // guardedby: every one must be held
	atomic bool
	// plain: a field not declared atomic in a struct that declares
	// checklocks properties on some field; using it through a sync/atomic
	// function says the declaration is missing.
	plain bool
	// ignore: +checklocksignore on the field, a property: no atomic
	// checks (explicit guards still apply, as in checklocks).
	ignore bool
	// readAny: +checklocksreadany, a read needs any one of the locks
	// held (shared or exclusive), a write still needs all.
	readAny bool
}

// access is how an address is used.
type access struct {
	read, write, atomic bool
	atomicFn            bool // passed to a sync/atomic function (not a method of an atomic type)
	stored              bool // stored into (a write of the value, not of the address taken)
}

// guardOf returns v's declarations, cached (imported ones cost a fact
// lookup).
func (e *engine) guardOf(v *types.Var) *guard {
	if v == nil {
		return nil
	}
	if g, ok := e.guards[v]; ok {
		return g
	}
	g := e.declaredGuard(v)
	if g == nil && v.IsField() && e.optedIn(v) {
		g = &guard{plain: true}
	}
	e.guards[v] = g
	return g
}

func (e *engine) declaredGuard(v *types.Var) *guard {
	var g *guard
	for _, it := range items(e.p.Decl(v)) {
		if g == nil {
			g = &guard{}
		}
		switch directive.Verb(it.Verb) {
		case directive.GuardedBy:
			g.locks = append(g.locks, it)
		case directive.Atomic:
			g.atomic = true
		case directive.Ignore:
			g.ignore = true
		case directive.ReadAny:
			g.readAny = true
		}
	}
	return g
}

// optedIn reports whether field's struct declares a lock, atomic or ignore
// property on any of its fields: only such structs (annotated checklocks
// style) have their other fields' atomic use checked.
func (e *engine) optedIn(field *types.Var) bool {
	owner := lockop.OwnerType(field)
	return owner != nil && e.guardsSomeField(owner, field)
}

// guardsSomeField reports whether the struct t (a named struct type)
// declares a guard on one of its fields other than except.
func (e *engine) guardsSomeField(t types.Type, except *types.Var) bool {
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return false
	}
	for f := range st.Fields() {
		if f != except && e.declaredGuard(f) != nil {
			return true
		}
	}
	return false
}

// checkAccess checks a field or package var access against its guard. On a
// +checklocksforce line a missing lock is not reported and counts as held
// exclusively from there on.
func (w *walker) checkAccess(instr ssa.Instruction, s State) State {
	switch x := instr.(type) {
	case *ssa.FieldAddr:
		if onlyDeferred(x) {
			return s // checked when the deferred call runs (checkDeferredFields)
		}
		return w.checkField(x, x.Pos(), s, func(use ssa.Instruction) bool { return !laterUse(x, use) })
	case *ssa.Store:
		if gl, ok := x.Addr.(*ssa.Global); ok {
			return w.checkGlobal(gl, access{write: true}, x.Pos(), s)
		}
		return w.checkLaterUse(x.Addr, x, s)
	case *ssa.UnOp:
		if gl, ok := x.X.(*ssa.Global); ok && x.Op == token.MUL {
			return w.checkGlobal(gl, classify(x, 1, w.e.checksOwnAccesses), x.Pos(), s)
		}
		if x.Op == token.MUL {
			return w.checkLaterUse(x.X, x, s)
		}
	case ssa.CallInstruction: // a call, also deferred or started as a goroutine
		for _, a := range x.Common().Args {
			if gl, ok := a.(*ssa.Global); ok {
				s = w.checkGlobal(gl, useInCall(x.Common(), gl, 0, w.e.checksOwnAccesses), x.Pos(), s)
			}
			s = w.checkLaterUse(a, x, s)
		}
	}
	return s
}

// laterUse reports whether use, a load, store or call through the field
// address fa, happens after the lock state may have changed since fa was
// taken (`p := &t.f; t.mu.Unlock(); *p = 1`): in another block, or after
// a call in between. Such a use is checked where it happens
// (checkLaterUse), under the locks held there.
func laterUse(fa *ssa.FieldAddr, use ssa.Instruction) bool {
	switch u := use.(type) {
	case *ssa.UnOp:
		if u.Op != token.MUL {
			return false
		}
	case *ssa.Store:
		if u.Addr != fa {
			return false
		}
	case *ssa.Call:
	default:
		return false
	}
	b := fa.Block()
	if use.Block() != b {
		return true
	}
	i, j := objects.InstrIndex(b, fa), objects.InstrIndex(b, use)
	if i < 0 || j <= i {
		return false
	}
	for _, in := range b.Instrs[i+1 : j] {
		switch in.(type) {
		case ssa.CallInstruction, *ssa.RunDefers:
			return true
		}
	}
	return false
}

// checkLaterUse checks, at use, the access through v when v is a field
// address whose use this is a later one (laterUse).
func (w *walker) checkLaterUse(v ssa.Value, use ssa.Instruction, s State) State {
	fa, ok := v.(*ssa.FieldAddr)
	if !ok || !laterUse(fa, use) || onlyDeferred(fa) {
		return s
	}
	pos := use.Pos()
	if !pos.IsValid() {
		pos = fa.Pos()
	}
	return w.checkField(fa, pos, s, func(u ssa.Instruction) bool { return u == use })
}

// checkField checks the access of a guarded field through its address fa
// (its uses that keep accepts say how; all when nil), as done at pos
// under s.
func (w *walker) checkField(fa *ssa.FieldAddr, pos token.Pos, s State, keep func(ssa.Instruction) bool) State {
	v := lockop.FieldOf(fa)
	g := w.e.guardOf(v)
	if g == nil || w.construction(fa.X, fa, s) {
		return s
	}
	var paths []string
	for i := range g.locks {
		paths = append(paths, w.e.guardPath(w.fn, fa.X, &g.locks[i]))
	}
	acc := classifyUses(fa, 0, w.e.checksOwnAccesses, keep)
	w.observeAccess(v, g, fa.X, acc, paths, pos, s)
	return w.checkGuard(v, g, paths, acc, pos, s)
}

// onlyDeferred reports whether a field's address is only given to
// deferred calls (`defer t.n.Store(0)`): the access happens when the
// call runs, under the locks held then, not at the defer statement.
func onlyDeferred(fa *ssa.FieldAddr) bool {
	refs := fa.Referrers()
	if refs == nil || len(*refs) == 0 {
		return false
	}
	for _, r := range *refs {
		if _, ok := r.(*ssa.Defer); !ok {
			return false
		}
	}
	return true
}

// checkDeferredFields checks, as the deferred call d runs under s, the
// field addresses given to it (onlyDeferred).
func (w *walker) checkDeferredFields(d *ssa.Defer, s State) State {
	for _, a := range d.Call.Args {
		if fa, ok := a.(*ssa.FieldAddr); ok && onlyDeferred(fa) {
			s = w.checkField(fa, fa.Pos(), s, nil)
		}
	}
	return s
}

func (w *walker) checkGlobal(gl *ssa.Global, acc access, pos token.Pos, s State) State {
	v := globalVar(gl)
	g := w.e.guardOf(v)
	if g == nil {
		return s
	}
	var paths []string
	for _, it := range g.locks {
		paths = append(paths, fromDeclPath(nil, it.Lock, it.LockClass, ""))
	}
	// Atomic use of a package var not declared atomic is not checked, as
	// checklocks' older suite expects (docs/decisions.md).
	acc.atomicFn = false
	return w.checkGuard(v, g, paths, acc, pos, s)
}

// checkGuard checks one access of v under s. Every lock of the guard must
// be held on every path (a lock held on some paths only is not held; a
// lock lent to a closure passed to a call is accepted); each missing lock
// is its own finding. A non-atomic write to a field both atomic and
// guarded, without the lock, is two findings.
func (w *walker) checkGuard(v *types.Var, g *guard, paths []string, acc access, pos token.Pos, s State) State {
	name := lockop.ShortName(v)
	if !acc.read && !acc.write {
		return s
	}
	forced := w.e.forced(pos)
	if (g.plain || len(g.locks) > 0) && !g.atomic && !g.ignore && acc.atomicFn && w.report && !forced {
		w.e.find(pos, "atomic", name+" is used with sync/atomic but not declared atomic (+checkatomic or //confined:atomic)")
	}
	if g.atomic && !g.ignore && !acc.atomic && (acc.write || len(g.locks) == 0) {
		// Atomic alone: every access. Atomic and guarded: writes must be
		// atomic (and locked, checked below); a locked plain read is fine.
		if w.report && !forced {
			w.e.find(pos, "atomic", name+" is declared atomic but accessed without sync/atomic")
		}
		if !acc.stored || len(g.locks) == 0 {
			return s
		}
	}
	if acc.atomic && !acc.write {
		return s // an atomic read of a guarded field needs no lock
	}
	if g.readAny && !acc.write {
		return w.checkReadAny(name, g, paths, pos, forced, s)
	}
	var atomicMissing []string // an atomic write's missing locks: one finding
	firstMissing, firstRule := "", ""
	for i, p := range paths {
		if p == "" {
			continue
		}
		it := g.locks[i]
		mu := shortClass(it.LockClass)
		held, ok := s.find(p)
		switch {
		case ok && (!held.Maybe || held.Lent) && !(acc.write && held.Shared):
			continue
		case forced:
			s = s.with(Hold{Path: p, Class: it.LockClass, Name: mu, Pos: pos})
			continue
		case !w.report:
			continue
		}
		rule, msg := missingGuard(w.e, accessVerb(acc)+name, mu, acc, held, ok)
		if acc.atomic {
			if firstMissing == "" {
				firstMissing, firstRule = p, rule
			}
			atomicMissing = append(atomicMissing, msg)
			continue
		}
		w.guardFinding(pos, p, rule, msg)
	}
	if len(atomicMissing) > 1 {
		firstRule = "guardedby"
	}
	if len(atomicMissing) > 0 {
		// One atomic operation, one problem however many locks it lacks.
		w.guardFinding(pos, firstMissing, firstRule, "atomic "+strings.Join(atomicMissing, "; "))
	}
	return s
}

// missingGuard is the rule and message for an access (verb names it) made
// without the guard lock mu as required (held, ok: what s holds of it).
func missingGuard(e *engine, verb, mu string, acc access, held Hold, ok bool) (rule, msg string) {
	switch {
	case ok && held.Maybe:
		return "guardedby", verb + " with " + mu + " held on some paths only (taken at " + e.at(held.Pos) + "): it must be held on every path"
	case acc.write && ok && held.Shared:
		return "guardedby-write-shared", verb + " with " + mu + " only read-locked (since " + e.at(held.Pos) + "): writes need Lock"
	}
	return "guardedby", verb + " without holding " + mu
}

// checkReadAny checks a read of a +checklocksreadany field: one of its
// locks held on every path, in either mode, is enough. With none, the one
// finding names them all; on a +checklocksforce line they count as held.
func (w *walker) checkReadAny(name string, g *guard, paths []string, pos token.Pos, forced bool, s State) State {
	var names []string
	some := "" // a lock held on some paths only, for the message
	for i, p := range paths {
		if p == "" {
			return s // a lock the analysis cannot name may be the one held
		}
		held, ok := s.find(p)
		if ok && (!held.Maybe || held.Lent) {
			return s
		}
		names = append(names, shortClass(g.locks[i].LockClass))
		if ok && some == "" {
			some = "; " + names[i] + " is held on some paths only (taken at " + w.e.at(held.Pos) + ")"
		}
	}
	switch {
	case forced:
		for i, p := range paths {
			s = s.with(Hold{Path: p, Class: g.locks[i].LockClass, Name: names[i], Pos: pos})
		}
	case w.report && len(paths) > 0:
		// Keyed by the first lock: in x.f++ the write's finding for that
		// lock replaces this one.
		w.guardFinding(pos, paths[0], "guardedby", "read of "+name+" without holding any of "+strings.Join(names, ", ")+" (+checklocksreadany: a read needs one of them)"+some)
	}
	return s
}

// guardFinding reports a missing lock at an access once: x.f++ reads and
// writes through two addresses at one position, and the write is the one
// reported.
func (w *walker) guardFinding(pos token.Pos, lock, rule, msg string) {
	key := guardKey{pos, lock}
	if i, ok := w.e.guardFound[key]; ok {
		if rule == "guardedby-write-shared" || strings.HasPrefix(msg, "write") {
			w.e.findings[i].Rule, w.e.findings[i].Message = rule, msg
		}
		return
	}
	n := len(w.e.findings)
	w.e.find(pos, rule, msg)
	if len(w.e.findings) > n {
		w.e.guardFound[key] = n
	}
}

type guardKey struct {
	pos  token.Pos
	lock string
}

func accessVerb(acc access) string {
	if acc.write {
		return "write to "
	}
	return "read of "
}

// construction reports whether base is (a field of) an object created in
// this function and still private at instruction at: initialising it
// before publication is not an access (see objects.Index.Private). A
// publication into a guarded field under its guards, still held since
// (underGuard), counts only once they are released: whoever finds the
// object there holds them.
func (w *walker) construction(base ssa.Value, at ssa.Instruction, s State) bool {
	for range 16 {
		fa, ok := base.(*ssa.FieldAddr)
		if !ok {
			break
		}
		base = fa.X
	}
	if a, ok := base.(*ssa.Alloc); ok && !a.Heap && a.Parent() == w.fn {
		return true // a stack temporary (a composite literal built before its copy): nobody else sees it
	}
	o, ok := w.e.objs.Origin(w.fn, base).(*ssa.Alloc) // allocated here: a constructor's result is not
	return ok && w.e.objs.PrivateUnless(o, at, func(pub ssa.Instruction) bool { return w.underGuard(pub, s) })
}

// guardPath is the path of the lock guarding a field of base, with
// aliases of base's struct type applied.
func (e *engine) guardPath(fn *ssa.Function, base ssa.Value, it *facts.DeclItem) string {
	p := fromDeclPath(nil, it.Lock, it.LockClass, pathOf(fn, base))
	if len(e.aliases) == 0 || !strings.HasPrefix(it.Lock, "field.") {
		return p
	}
	root, parts := splitPath(fn, base)
	for i, n := range strings.Split(strings.TrimPrefix(it.Lock, "field."), ".") {
		pt := part{Name: n}
		if i == 0 {
			pt.Base = objects.NamedOf(base.Type())
		}
		parts = append(parts, pt)
	}
	return e.joinCanonical(root, parts)
}
