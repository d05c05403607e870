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
	lock   *facts.DeclItem // guardedby, or nil
	atomic bool
}

// access is how an address is used.
type access struct {
	read, write, atomic bool
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
	var g *guard
	for _, it := range items(e.p.Decl(v)) {
		switch directive.Verb(it.Verb) {
		case directive.GuardedBy:
			if g == nil {
				g = &guard{}
			}
			g.lock = &it
		case directive.Atomic:
			if g == nil {
				g = &guard{}
			}
			g.atomic = true
		}
	}
	e.guards[v] = g
	return g
}

// checkAccess checks a field or package var access against its guard.
func (w *walker) checkAccess(instr ssa.Instruction, s State) {
	var v *types.Var
	var lockPath string
	switch x := instr.(type) {
	case *ssa.FieldAddr:
		v = fieldVar(x)
		g := w.e.guardOf(v)
		if g == nil || w.construction(x.X, x) {
			return
		}
		if g.lock != nil {
			lockPath = w.e.guardPath(w.fn, x.X, g.lock)
		}
		w.checkGuard(v, g, lockPath, classify(x, 0), x.Pos(), s)
	case *ssa.Store:
		if gl, ok := x.Addr.(*ssa.Global); ok {
			w.checkGlobal(gl, access{write: true}, x.Pos(), s)
		}
	case *ssa.UnOp:
		if gl, ok := x.X.(*ssa.Global); ok && x.Op == token.MUL {
			w.checkGlobal(gl, classify(x, 1), x.Pos(), s)
		}
	case *ssa.Call:
		for _, a := range x.Call.Args {
			if gl, ok := a.(*ssa.Global); ok {
				w.checkGlobal(gl, useInCall(x, gl, 0), x.Pos(), s)
			}
		}
	}
}

func (w *walker) checkGlobal(gl *ssa.Global, acc access, pos token.Pos, s State) {
	v := globalVar(gl)
	g := w.e.guardOf(v)
	if g == nil {
		return
	}
	lockPath := ""
	if g.lock != nil {
		lockPath = fromDeclPath(nil, g.lock.Lock, g.lock.LockClass, "")
	}
	w.checkGuard(v, g, lockPath, acc, pos, s)
}

func (w *walker) checkGuard(v *types.Var, g *guard, lockPath string, acc access, pos token.Pos, s State) {
	name := lockop.ShortName(v)
	if g.atomic && !acc.atomic && (acc.write || g.lock == nil) && (acc.read || acc.write) {
		// Atomic alone: every access. Atomic and guarded: writes must be
		// atomic (and locked, checked below); a locked plain read is fine.
		w.e.find(pos, "atomic", name+" is declared atomic but accessed without sync/atomic")
		return
	}
	if g.lock == nil || lockPath == "" || acc.atomic && !acc.write {
		return // an atomic read of a guarded field needs no lock
	}
	held, ok := s.find(lockPath)
	if !ok && !portable(lockPath) {
		held, ok = s.findClass(g.lock.LockClass)
	}
	mu := shortClass(g.lock.LockClass)
	switch {
	case ok && held.Maybe:
	case acc.write && ok && held.Shared:
		w.e.find(pos, "guardedby-write-shared", "write to "+name+" with "+mu+" only read-locked (since "+w.e.at(held.Pos)+"): writes need Lock")
	case acc.write && !ok:
		w.e.find(pos, "guardedby", "write to "+name+" without holding "+mu)
	case acc.read && !ok:
		w.e.find(pos, "guardedby", "read of "+name+" without holding "+mu)
	}
}

// construction reports whether base is (a field of) an object created in
// this function and still private at instruction at: initialising it
// before publication is not an access (see objects.Index.Private).
func (w *walker) construction(base ssa.Value, at ssa.Instruction) bool {
	for range 16 {
		fa, ok := base.(*ssa.FieldAddr)
		if !ok {
			break
		}
		base = fa.X
	}
	o := w.e.objs.Origin(w.fn, base)
	return o != nil && w.e.objs.Private(o, at)
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
