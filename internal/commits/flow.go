package commits

import (
	"golang.org/x/tools/go/ssa"
)

// The typestate per obligation key (role, lock): whether a drain of role
// happened on every path since the last acquisition of lock. Ordered so
// that the meet of two paths is the minimum.
const (
	bad   uint8 = iota // lock taken here, no drain since: no caller can fix it
	entry              // neither since entry: the caller's state decides
	good               // drained after the last acquisition
)

// state holds one value per key; nil means the point is not reached.
type state []uint8

func (s state) clone() state { return append(state(nil), s...) }

// meetInto lowers *dst to the meet with s and reports whether it changed.
func meetInto(dst *state, s state) bool {
	if s == nil {
		return false
	}
	if *dst == nil {
		*dst = s.clone()
		return true
	}
	changed := false
	for i, v := range s {
		if v < (*dst)[i] {
			(*dst)[i] = v
			changed = true
		}
	}
	return changed
}

// checker is called at each effect with the state just before it.
type checker func(cs *callSite, e *effect, s state)

// flow runs the forward must-analysis over fn's blocks to a fixpoint and
// returns the state at each block's entry.
func (a *analysis) flow(fn *ssa.Function) []state {
	in := make([]state, len(fn.Blocks))
	start := make(state, len(a.keys))
	for i := range start {
		start[i] = entry
	}
	var work []*ssa.BasicBlock
	queued := make([]bool, len(fn.Blocks))
	push := func(b *ssa.BasicBlock) {
		if !queued[b.Index] {
			queued[b.Index] = true
			work = append(work, b)
		}
	}
	for _, b := range []*ssa.BasicBlock{fn.Blocks[0], fn.Recover} {
		if b != nil {
			meetInto(&in[b.Index], start)
			push(b)
		}
	}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		queued[b.Index] = false
		out := a.transfer(b, in[b.Index].clone(), nil)
		for _, succ := range b.Succs {
			if meetInto(&in[succ.Index], out) {
				push(succ)
			}
		}
	}
	return in
}

// transfer applies b's call effects to s (in place) and returns it, calling
// check before each effect when check is not nil.
func (a *analysis) transfer(b *ssa.BasicBlock, s state, check checker) state {
	if s == nil {
		return nil
	}
	for _, instr := range b.Instrs {
		cs := a.sites[instr]
		if cs == nil {
			continue
		}
		for i := range cs.effects {
			e := &cs.effects[i]
			if check != nil {
				check(cs, e, s)
			}
			a.apply(e, s)
		}
	}
	return s
}

// apply changes s as the call does: acquisitions reset the drain for their
// lock, drains satisfy every key of their role, and a summarised callee
// leaves what its exit state says (entry: unchanged).
func (a *analysis) apply(e *effect, s state) {
	for _, class := range e.acquires {
		for _, k := range a.byLock[class] {
			s[k] = bad
		}
	}
	if e.local != nil {
		if sum := a.sums[e.local]; sum != nil && sum.exit != nil {
			for k, v := range sum.exit {
				if v != entry {
					s[k] = v
				}
			}
		}
	}
	for _, role := range e.drains {
		for _, k := range a.byRole[role] {
			s[k] = good
		}
	}
}

// exitState is the meet of the states at fn's returns (nil if it never
// returns).
func (a *analysis) exitState(fn *ssa.Function, in []state) state {
	var exit state
	for _, b := range fn.Blocks {
		if len(b.Instrs) == 0 {
			continue
		}
		if _, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); !ok {
			continue
		}
		meetInto(&exit, a.transfer(b, in[b.Index].clone(), nil))
	}
	return exit
}
