package locks

import (
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/roots"
)

// A goroutine has no caller to release what it leaves held: a lock the
// goroutine's function took (itself or through helpers) and still holds
// for sure when it returns stays locked forever, and the next Lock of it
// anywhere blocks for good. Reported when some other function of the
// package takes the lock (the goroutine is not its only user), at each
// such return.

// takenElsewhere reports whether a function of the package other than fn
// takes class.
func (e *engine) takenElsewhere(class string, fn *ssa.Function) bool {
	for _, f := range e.p.Funcs {
		if info := e.infos[f]; f != fn && info != nil && takesClass(info.takes, class) {
			return true
		}
	}
	return false
}

func takesClass(ts []take, class string) bool {
	for _, t := range ts {
		if t.Class == class && !t.deep {
			return true
		}
	}
	return false
}

// goroutineLeaks reports the returns of a goroutine root that hold a lock
// it took. reported are the paths already reported as leaks.
func (w *walker) goroutineLeaks(reported map[string]bool) {
	r := w.goroutineRoot()
	if r == nil {
		return
	}
	for _, ret := range w.rets {
		for _, h := range ret.state.holds {
			if _, atEntry := w.entry.find(h.Path); atEntry || h.Maybe || h.Try || h.Lent || h.Class == "" || reported[h.Path] || w.fresh(h.Path) {
				continue
			}
			if !w.e.takenElsewhere(h.Class, w.fn) || w.starterUnlocks(h) {
				continue
			}
			reported[h.Path] = true
			w.findAtReturn(ret, "lock-leak", h.Name+" taken at "+w.e.at(h.Pos)+" is still held when "+r.Describe()+" ends: nothing releases it, and every later Lock of it blocks",
				takenHops(h)...)
		}
	}
}

// handsOver reports whether h, held when this goroutine's function
// returns, is handed to other code of its family that unlocks it (a
// test's goroutines using a mutex as a signal: one locks and returns, a
// sibling unlocks): neither a leak nor an inconsistent return.
func (w *walker) handsOver(h Hold) bool {
	return w.goroutineRoot() != nil && w.starterUnlocks(h)
}

// goroutineRoot is the root of the walked function when it is the body
// of a goroutine (a go statement's or an asynchronous API's), else nil.
func (w *walker) goroutineRoot() *roots.Root {
	r := w.e.ctx.RootOf(w.fn)
	if r == nil || r.Kind != roots.KindGo && r.Kind != roots.KindAsync {
		return nil
	}
	return r
}
