package objects

import (
	"go/token"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A load through a pointer parameter (`*dst`) names the object the
// pointer held on entry ("p0" dereferenced) only while nothing stores
// through that pointer: after `*dst = other` (or a call of a closure run
// in place that does it), `(*dst).f` is other's f, not the entry
// object's. storedThrough says what such a load holds.

// storedThrough reports, for load (`*x` with x a parameter or free
// variable of pointer type), whether a store through x in its function
// may come before it: then v is the stored value when one store decides
// (it runs before load on every path and is the last), else key names
// the set of stores that may reach load (loads that the same stores may
// reach hold one object, so they share the key). stored is false when
// no store through x reaches load: the structural name holds.
func storedThrough(load *ssa.UnOp) (v ssa.Value, key string, stored bool) {
	if load.Op != token.MUL {
		return nil, "", false
	}
	if a, ok := load.X.(*ssa.Alloc); ok && IsCell(a) {
		return nil, "", false // a variable's cell: reachingCell
	}
	base := pointerBase(load.X)
	switch base.(type) {
	case *ssa.Parameter, *ssa.FreeVar:
	default:
		return nil, "", false
	}
	defs := pointerDefs(load.Parent(), base)
	if len(defs) == 0 || len(defs) > maxDefs {
		return nil, "", false // none, or too many to judge: the structural name, as before
	}
	var reaching []ssa.Instruction
	var last ssa.Instruction
	for _, d := range defs {
		switch {
		case before(d, load):
			reaching = append(reaching, d)
			if last == nil || before(last, d) {
				last = d
			}
		case reachesAgain(d, load):
			reaching = append(reaching, d)
		}
	}
	if len(reaching) == 0 {
		return nil, "", false
	}
	if last != nil && lastDecides(last, load, reaching) {
		if st, ok := last.(*ssa.Store); ok {
			return st.Val, "", true
		}
	}
	var ids []string
	for _, d := range reaching {
		ids = append(ids, strconv.Itoa(int(d.Pos())))
	}
	if entryReaches(load, reaching) {
		ids = append(ids, "entry")
	}
	sort.Strings(ids)
	// Named after the pointer itself, not the load's operand: a captured
	// pointer is read from its cell anew at each use.
	return nil, "v:" + base.Name() + "@" + strings.Join(ids, ","), true
}

// lastDecides reports whether last, a store before the load on every
// path, overwrites every other store that may reach the load: none gets
// there without passing last.
func lastDecides(last, load ssa.Instruction, reaching []ssa.Instruction) bool {
	for _, d := range reaching {
		if d == last || d.Block() == last.Block() && before(d, last) {
			continue // overwritten by last in its own block
		}
		if reachesAvoiding(d, load, last) {
			return false
		}
	}
	return true
}

// pointerBase is the pointer v stands for through a captured variable's
// cell stored once (SSA spills a captured parameter to one); not through
// loads of memory, which is what storedThrough judges.
func pointerBase(v ssa.Value) ssa.Value {
	for range maxSteps {
		switch x := v.(type) {
		case *ssa.UnOp:
			a, ok := x.X.(*ssa.Alloc)
			if x.Op != token.MUL || !ok || !IsCell(a) || StoredOnce(a) == nil {
				return v
			}
			v = StoredOnce(a)
		case *ssa.ChangeType:
			v = x.X
		default:
			return v
		}
	}
	return v
}

// pointerDefs lists the instructions of fn that store through the
// pointer base (a parameter or free variable, also when captured in a
// cell): stores into *base, and calls of closures run in place that
// capture it and store through it. A closure that does so and is not only
// called in place is listed by its creation (every later load unknown).
func pointerDefs(fn *ssa.Function, base ssa.Value) []ssa.Instruction {
	var defs []ssa.Instruction
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch u := instr.(type) {
			case *ssa.Store:
				if pointerBase(u.Addr) == base {
					defs = append(defs, u)
				}
			case *ssa.MakeClosure:
				if !closureStoresThrough(u, base) {
					continue
				}
				calls, ok := inPlaceCalls(u)
				if !ok {
					defs = append(defs, u)
					continue
				}
				defs = append(defs, calls...)
			}
		}
	}
	return defs
}

// closureStoresThrough reports whether the closure mc stores through the
// pointer base it captures (bound directly, or in a cell holding it).
func closureStoresThrough(mc *ssa.MakeClosure, base ssa.Value) bool {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return true
	}
	for i, b := range mc.Bindings {
		if i >= len(fn.FreeVars) {
			break
		}
		fv := fn.FreeVars[i]
		cell := false
		if a, ok := b.(*ssa.Alloc); ok && IsCell(a) && StoredOnce(a) == base {
			cell = true
		} else if b != base {
			continue
		}
		for _, blk := range fn.Blocks {
			for _, instr := range blk.Instrs {
				switch u := instr.(type) {
				case *ssa.Store:
					if u.Addr == fv && !cell {
						return true
					}
					if ld, ok := u.Addr.(*ssa.UnOp); ok && cell && ld.Op == token.MUL && ld.X == fv {
						return true
					}
				case *ssa.MakeClosure:
					if !cell && closureStoresThrough(u, fv) {
						return true
					}
				}
			}
		}
	}
	return false
}

// entryReaches reports whether load can be reached from the function's
// entry without running any of defs.
func entryReaches(load ssa.Instruction, defs []ssa.Instruction) bool {
	fn := load.Parent()
	blocked := map[*ssa.BasicBlock]bool{}
	for _, d := range defs {
		if d.Block() != load.Block() || before(d, load) {
			blocked[d.Block()] = true
		}
	}
	target := load.Block()
	seen := map[*ssa.BasicBlock]bool{}
	stack := []*ssa.BasicBlock{fn.Blocks[0]}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[b] {
			continue
		}
		seen[b] = true
		if b == target {
			return !blocked[b]
		}
		if blocked[b] {
			continue
		}
		stack = append(stack, b.Succs...)
	}
	return false
}
