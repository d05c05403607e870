package infer

import (
	"maps"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// A lockset is the locks certainly held at a point, by symbolic path
// (objects.PathOf) relative to the function.
type lockset map[string]hold

type hold struct {
	exclusive bool
	// local: taken in this function, not inherited from its callers.
	// Evidence that a lock guards a field is stronger where the function
	// touching the field takes it itself.
	local bool
}

// meet is the intersection of a and b: held on both paths, exclusively
// and locally only if on both.
func meet(a, b lockset) lockset {
	out := lockset{}
	for p, h := range a {
		if g, ok := b[p]; ok {
			out[p] = hold{exclusive: h.exclusive && g.exclusive, local: h.local && g.local}
		}
	}
	return out
}

func equal(a, b lockset) bool { return maps.Equal(a, b) }

// transfer applies instr's lock operation to s (in place). Deferred
// unlocks run at return, so they change nothing in the body; TryLock may
// fail, so it adds nothing.
func transfer(fn *ssa.Function, instr ssa.Instruction, s lockset) {
	call, ok := instr.(*ssa.Call)
	if !ok {
		return
	}
	op, lock := lockop.Classify(&call.Call)
	switch op {
	case lockop.Lock, lockop.RLock:
		path := objects.PathOf(fn, lock)
		if h, held := s[path]; held && h.exclusive && op == lockop.RLock {
			return
		}
		s[path] = hold{exclusive: op == lockop.Lock, local: true}
	case lockop.Unlock, lockop.RUnlock:
		delete(s, objects.PathOf(fn, lock))
	}
}

// walkLocks runs the must-held analysis over fn from entry and calls
// visit at every instruction with the locks held before it.
func walkLocks(fn *ssa.Function, entry lockset, visit func(ssa.Instruction, lockset)) {
	if len(fn.Blocks) == 0 {
		return
	}
	in := make([]lockset, len(fn.Blocks)) // nil: not reached yet
	in[0] = lockset{}
	maps.Copy(in[0], entry)
	order := fn.DomPreorder()
	for range 4 * len(order) { // a bound: the lattice is finite and small
		changed := false
		for _, b := range order {
			if in[b.Index] == nil {
				continue
			}
			s := maps.Clone(in[b.Index])
			for _, instr := range b.Instrs {
				transfer(fn, instr, s)
			}
			for _, succ := range b.Succs {
				next := s
				if in[succ.Index] != nil {
					next = meet(in[succ.Index], s)
				}
				if in[succ.Index] == nil || !equal(next, in[succ.Index]) {
					in[succ.Index] = maps.Clone(next)
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	for _, b := range order {
		if in[b.Index] == nil {
			continue
		}
		s := maps.Clone(in[b.Index])
		for _, instr := range b.Instrs {
			visit(instr, s)
			transfer(fn, instr, s)
		}
	}
}

// inherited maps a caller's lockset at a call into the callee: locks on
// paths through the arguments (args, the arguments' paths in the caller,
// receiver first) or, for a closure, through its captured variables
// (binds), and package-level locks. Local marks drop: the callee did not
// take them.
func inherited(s lockset, binds, args []string) lockset {
	out := lockset{}
	for p, h := range s {
		q := objects.IntoClosure(p, binds, args)
		if strings.HasPrefix(q, "o:") || strings.HasPrefix(q, "v:") {
			continue
		}
		out[q] = hold{exclusive: h.exclusive}
	}
	return out
}
