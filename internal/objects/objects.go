// Package objects answers, for every confinelint engine, which object an
// SSA value is: the one place that looks through conversions, local
// variable cells, fields of fresh objects and closures' captured
// variables, names values by symbolic paths, and knows when an object a
// function creates becomes visible to other code.
//
// # What it answers
//
//   - Underlying: the value v stands for, seen through conversions, loads
//     of a local variable stored once, loads of a fresh object's field
//     stored once (`(&API{c: c}).c` is c), and phis of one value.
//   - Path: a symbolic path ("p0.mu", "f1.state.mu", "g:pkg.var",
//     "v:t5.a[p1].mu"), relative to the function, the language in which
//     lock summaries are rewritten from callee to caller.
//   - Origin and Private: the allocation (or constructor call) that
//     created an object in this function, and whether it is still private
//     at an instruction: no publication of that allocation can have run
//     since it executed (per allocation: an object made afresh in every
//     loop iteration and published at the end of it is private again in
//     the next). One publication rule for ownership's construction
//     exemption and lockorder's unpublished locks.
//   - Escapes and ParamFlow: whether a function hands a parameter to other
//     code (so a call passing a fresh object publishes it), or only stores
//     it into another parameter's memory (`e.ops.InitHandler(e)` keeps e
//     inside e); other packages' functions answer through facts.
//   - Const: the constant a parameter has at a call site, for guards that
//     test a parameter directly (`if !locked { mu.Lock() }`).
//   - LockerOf and CondLock: the lock a sync.Locker or a Cond's L was
//     made from (mu.RLocker(), sync.NewCond(&c.mu), also kept in a field).
//   - FuncsOf: the package's functions a func value may hold when it is
//     not one known function: followed back through setters' parameters,
//     captured arguments, fields, package vars and map, slice or array
//     elements to the functions and closures stored.
//
// An Index is built per package and is not for concurrent use.
package objects

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Index answers identity questions over one package's SSA.
type Index struct {
	funcs   []*ssa.Function        // the package's source functions, in source order
	funcSet map[*ssa.Function]bool // the same, as a set
	// startsGoroutine reports whether a function value is run on another
	// goroutine (a go target or an asynchronous API's argument): handing
	// a closure over an object to it publishes the object.
	startsGoroutine func(*ssa.Function) bool

	closures map[*ssa.Function]*ssa.MakeClosure // the one creation of each closure; nil when several
	pubs     map[ssa.Value][]ssa.Instruction    // publications per origin
	flows    map[*ssa.Function][]int            // per parameter, see ParamFlow
	// intoParam: publications that store into the memory of a parameter
	// of their function (its index), for ParamFlow.
	intoParam map[ssa.Instruction]int
	imported  func(*types.Func) []int // other packages' ParamFlow, from facts
	fields    *fieldOrigins           // built on the first Via of a pointer field
	lockers   map[*types.Var]*relLock // Locker and Cond fields resolved (nil: unknown)
	// funcStores: func values stored into fields, vars and containers,
	// built on the first FuncsOf.
	funcStores *funcStores
	closed     *ClosedWorld // nil: other packages may use this one
	single     *singletons  // built on the first Singleton
}

// New builds the index of a package's source functions. startsGoroutine
// may be nil (nothing is started asynchronously).
func New(funcs []*ssa.Function, startsGoroutine func(*ssa.Function) bool) *Index {
	if startsGoroutine == nil {
		startsGoroutine = func(*ssa.Function) bool { return false }
	}
	x := &Index{funcs: funcs, funcSet: map[*ssa.Function]bool{}, startsGoroutine: startsGoroutine,
		pubs: map[ssa.Value][]ssa.Instruction{}, flows: map[*ssa.Function][]int{}, intoParam: map[ssa.Instruction]int{}}
	for _, fn := range funcs {
		x.funcSet[fn] = true
	}
	return x
}

// ClosureOf returns the MakeClosure that creates the anonymous function
// fn when there is exactly one, else nil.
func (x *Index) ClosureOf(fn *ssa.Function) *ssa.MakeClosure {
	if x.closures == nil {
		x.closures = map[*ssa.Function]*ssa.MakeClosure{}
		seen := map[*ssa.Function]int{}
		for _, f := range x.funcs {
			for _, b := range f.Blocks {
				for _, instr := range b.Instrs {
					if mc, ok := instr.(*ssa.MakeClosure); ok {
						if g, ok := mc.Fn.(*ssa.Function); ok {
							seen[g]++
							x.closures[g] = mc
						}
					}
				}
			}
		}
		for g, n := range seen {
			if n > 1 {
				x.closures[g] = nil
			}
		}
	}
	return x.closures[fn]
}

// Nested returns fn and the closures created in it, at any depth.
func Nested(fn *ssa.Function) []*ssa.Function {
	out := []*ssa.Function{fn}
	for i := 0; i < len(out); i++ {
		out = append(out, out[i].AnonFuncs...)
	}
	return out
}
