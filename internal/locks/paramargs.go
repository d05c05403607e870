package locks

import (
	"strings"

	"golang.org/x/tools/go/ssa"
)

// An error callback returns at once when it is given no error (`func (wb
// *WriteBatch) callback(err error) { if err == nil { return }; wb.Lock()
// ...`); called on a failure branch with the error found (`if err != nil
// { cb(err); return }`), it takes its lock wherever that failure happens.
// Its branch is the argument's, decided at the call: badger's
// WriteBatch.Flush, holding the batch's lock into CommitWith(wb.callback),
// which calls the callback inline when the commit fails. So a param call
// records the arguments it knows are not nil, and a passed function's one
// nil test of such a parameter, taking its lock where it is not nil, is no
// condition there.

// maxNonNilArgs bounds the arguments a param call keeps a bit for.
const maxNonNilArgs = 64

// nonNilArgs returns, one bit per argument, those the walk knows are not
// nil at the call: tested so on every path here, or made here.
func (w *walker) nonNilArgs(args []ssa.Value, s State) uint64 {
	var out uint64
	for i, a := range args {
		if i >= maxNonNilArgs {
			break
		}
		if w.knownNotNil(a, s) {
			out |= 1 << i
		}
	}
	return out
}

// knownNotNil reports whether v, at the walked instruction, is surely not
// nil: a value the walk's facts or a dominating test say is not, or a
// newly made one.
func (w *walker) knownNotNil(v ssa.Value, s State) bool {
	switch v.(type) {
	case *ssa.MakeInterface, *ssa.Alloc, *ssa.MakeClosure, *ssa.MakeMap, *ssa.MakeChan:
		return true
	}
	if w.blk != nil && knownNonNil(w.blk, v) {
		return true
	}
	return w.testedNotNil(v, s)
}

// testedNotNil reports whether the walk's branches found v not nil.
func (w *walker) testedNotNil(v ssa.Value, s State) bool {
	key := w.condKey(v)
	return key != "" && condKnown(cond{key: key, val: nilConst, neg: true}, s)
}

// argDecides reports whether the one branch condition of ft's take tk is
// a nil test of one of ft's parameters that the param call pc passes a
// value known not nil, the take on its not-nil side.
func argDecides(ft *target, tk take, pc paramCall) bool {
	c := tk.when
	if c == nil || tk.branch != 1 || tk.cond != 1 || !c.neg || c.val != nilConst || pc.nonNil == 0 {
		return false
	}
	path, _, _ := strings.Cut(c.key, "#")
	root, rest := rootOf(path)
	k := paramIndex(root, "p")
	if rest != "" || k < 0 {
		return false
	}
	// A bound method value or a closure's parameters follow what it
	// binds: the call's arguments are the last ones.
	i := k - (len(ft.fn.Params) - pc.args)
	return i >= 0 && i < pc.args && i < maxNonNilArgs && pc.nonNil&(1<<i) != 0
}
