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
// It follows base's uses (it is asked on every naming of such a load),
// not every instruction of fn.
func pointerDefs(fn *ssa.Function, base ssa.Value) []ssa.Instruction {
	var defs []ssa.Instruction
	seen := map[ssa.Value]bool{}
	closures := map[*ssa.MakeClosure]bool{}
	closure := func(mc *ssa.MakeClosure) {
		if closures[mc] || !closureStoresThrough(mc, base) {
			return
		}
		closures[mc] = true
		if calls, ok := inPlaceCalls(mc); ok {
			defs = append(defs, calls...)
		} else {
			defs = append(defs, mc)
		}
	}
	// alias visits a value pointerBase resolves to base.
	var alias func(v ssa.Value)
	alias = func(v ssa.Value) {
		if seen[v] || v.Referrers() == nil {
			return
		}
		seen[v] = true
		for _, r := range *v.Referrers() {
			switch u := r.(type) {
			case *ssa.Store:
				if u.Addr == v {
					defs = append(defs, u)
				} else if cell, ok := u.Addr.(*ssa.Alloc); ok && IsCell(cell) && StoredOnce(cell) == v {
					cellUses(cell, base, alias, closure)
				}
			case *ssa.ChangeType:
				alias(u)
			case *ssa.MakeClosure:
				if v == base {
					closure(u)
				}
			}
		}
	}
	alias(base)
	return defs
}

// cellUses visits the loads of cell, a captured variable's cell holding
// an alias of base, as aliases, and the closures capturing it.
func cellUses(cell *ssa.Alloc, base ssa.Value, alias func(ssa.Value), closure func(*ssa.MakeClosure)) {
	for _, r := range *cell.Referrers() {
		switch u := r.(type) {
		case *ssa.UnOp:
			if u.Op == token.MUL {
				alias(u)
			}
		case *ssa.MakeClosure:
			if StoredOnce(cell) == base {
				closure(u)
			}
		}
	}
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
		if a, ok := b.(*ssa.Alloc); ok && IsCell(a) && StoredOnce(a) == base {
			if storesThroughLoads(fv) {
				return true
			}
		} else if b == base && storesThrough(fv) {
			return true
		}
	}
	return false
}

// storesThrough reports whether a closure stores through its free
// variable fv, a pointer (also in a closure of its own).
func storesThrough(fv ssa.Value) bool {
	for _, r := range *fv.Referrers() {
		switch u := r.(type) {
		case *ssa.Store:
			if u.Addr == fv {
				return true
			}
		case *ssa.MakeClosure:
			if closureStoresThrough(u, fv) {
				return true
			}
		}
	}
	return false
}

// storesThroughLoads reports whether a closure stores through the pointer
// it loads from its free variable fv, a cell.
func storesThroughLoads(fv ssa.Value) bool {
	for _, r := range *fv.Referrers() {
		ld, ok := r.(*ssa.UnOp)
		if !ok || ld.Op != token.MUL || ld.Referrers() == nil {
			continue
		}
		for _, rr := range *ld.Referrers() {
			if st, ok := rr.(*ssa.Store); ok && st.Addr == ld {
				return true
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
	return BlockReaches([]*ssa.BasicBlock{fn.Blocks[0]}, load.Block(), func(b *ssa.BasicBlock) bool { return blocked[b] })
}
