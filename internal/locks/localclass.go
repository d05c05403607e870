package locks

import (
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// Locals as lock classes. A mutex declared as a local variable (`var a,
// b sync.Mutex`) and shared by the closures a function starts as
// goroutines has no field or package var to name its class, so it took
// part in no order edge and no blocking check: two goroutines taking a
// and b in opposite orders, or one holding a across a send the other
// must receive after taking a, went unreported. Such a lock's class is
// its declaration, as lockdep names a lock by where it was initialised:
// the variable (or the new(...) or composite literal) of the function
// that allocates it, reached from closures through their free variables.
// Not a variable declared in a loop: each iteration makes another lock,
// and what one iteration took (chanOp.Before) says nothing of the next
// one's (sync's TestCondSignalStealing, a mutex per iteration).
// A class never leaves the package (privateLeaves drops its takes from
// the facts, edgesFact its edges): nothing outside can name the variable.

// localClass returns the class and the name of the lock lv when it is a
// variable (or allocation) of a function of this package, "" otherwise.
func (e *engine) localClass(fn *ssa.Function, lv ssa.Value) (class, name string) {
	f, v := e.objs.Resolve(fn, lv)
	alloc, ok := v.(*ssa.Alloc)
	if !ok || f == nil || !e.p.FuncSet[f] && f.Parent() == nil || objects.OnCycle(alloc.Block()) {
		return "", ""
	}
	name = alloc.Comment
	switch name {
	case "", "complit", "new", "varargs", "slicelit", "makeslice":
		name = sourceName(lv)
	}
	class = e.p.Pass.Pkg.Path() + "." + e.funcName(f) + "." + name + "@" + e.at(alloc.Pos())
	e.locals[class] = true
	return class, name
}
