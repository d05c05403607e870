package locks

import (
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// A lock can change goroutines: a goroutine locks it and the function
// that started the goroutine unlocks it once told to (a channel receive,
// a close), or the other way round. Neither side is wrong on its own:
//
//   - a goroutine that ends holding a lock its starter unlocks (the
//     starter's code, closures included, unlocks that class) hands the
//     lock over and leaks nothing;
//   - an unlock of a lock already unlocked here is no error when a
//     goroutine this code starts takes that lock in between.
//
// Lock classes match by field, or by local variable (localclass.go).

// family is fn and the closures nested in it, from the outermost function.
func family(fn *ssa.Function) []*ssa.Function {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	out := []*ssa.Function{fn}
	for i := 0; i < len(out); i++ {
		out = append(out, out[i].AnonFuncs...)
	}
	return out
}

// starterUnlocks reports whether the code that started the goroutine fn
// (fn's enclosing function and its closures) unlocks a lock of h's class.
func (w *walker) starterUnlocks(h Hold) bool {
	if w.fn.Parent() == nil {
		return false
	}
	for _, f := range family(w.fn) {
		if f == w.fn {
			continue
		}
		for _, b := range f.Blocks {
			for _, instr := range b.Instrs {
				if w.e.releasesClassVia(instr, h) {
					return true // a helper, or a method value (go unlockLater(mu.Unlock))
				}
				ci, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				op, lv := lockop.Classify(ci.Common())
				if op != lockop.Unlock && op != lockop.RUnlock {
					continue
				}
				if sameClass(h, w.e.lockClassOf(f, lv), sourceName(lv)) {
					return true
				}
			}
		}
	}
	return false
}

// startedTakes reports whether a goroutine this code (the enclosing
// function and its closures) starts takes a lock of h's class.
func (w *walker) startedTakes(h Hold) bool {
	for _, f := range family(w.fn) {
		for _, b := range f.Blocks {
			for _, instr := range b.Instrs {
				g, ok := instr.(*ssa.Go)
				if !ok {
					continue
				}
				for _, t := range w.e.goTargets(f, g) {
					if info := w.e.infos[t]; info != nil {
						for _, tk := range info.takes {
							if !tk.deep && sameClass(h, tk.Class, tk.Name) {
								return true
							}
						}
					}
				}
			}
		}
	}
	return false
}

func sameClass(h Hold, class, name string) bool {
	if h.Class != "" {
		return class == h.Class
	}
	return class == "" && name == h.Name
}

// lockClassOf is the class holdOf gives the lock lv of fn.
func (e *engine) lockClassOf(fn *ssa.Function, lv ssa.Value) string {
	if v := lockop.ClassOf(lv); v != nil {
		return lockop.ClassKey(v)
	}
	if c := lockop.ElementOf(lv); c != nil {
		return lockop.ElemKey(c)
	}
	class, _ := e.localClass(fn, lv)
	return class
}

// releasesClassVia reports whether instr calls, or makes a method value
// of, a package function whose summary releases a lock of h's class.
func (e *engine) releasesClassVia(instr ssa.Instruction, h Hold) bool {
	var f *ssa.Function
	switch x := instr.(type) {
	case ssa.CallInstruction:
		f = x.Common().StaticCallee()
	case *ssa.MakeClosure:
		f, _ = x.Fn.(*ssa.Function)
		if f != nil {
			if m := e.boundMethod(f); m != nil {
				f = m
			}
		}
	}
	if f == nil {
		return false
	}
	info := e.infos[e.canonical(f)]
	if info == nil {
		info = e.importedSummary(f)
	}
	if info == nil {
		return false
	}
	for _, r := range info.releases {
		if sameClass(h, r.Class, r.Name) {
			return true
		}
	}
	return false
}
