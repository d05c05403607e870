package locks

import (
	"go/token"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// Blocking inside callees: a function's summary lists the operations that
// block in it or in the functions it calls (blocks), so a lock the caller
// holds across the call is held across them: a worker holding a read lock
// while a queue's Pop waits on its Cond. A call with several candidates
// (an interface's implementations) may block if one of them does, as a
// callee may on one of its branches: the operation names that
// candidate's channel, and a finding still needs a goroutine that
// unblocks that channel and takes the lock (distribution's
// Broadcaster.Close, closing every sink under its lock, waits in the
// queue sink's Close for a goroutine that needs the lock). A Cond.Wait
// releases its own lock while it waits (the lock the Cond was made with,
// see objects.CondLock): that lock is not held across it. A Wait whose
// lock is unknown is not taken as blocking, as it may release any held
// lock.

// condWait is what a Cond.Wait is called in messages.
const condWait = "Cond.Wait"

// blockOp is an operation that blocks until another goroutine acts.
type blockOp struct {
	ops  []chanOp // the channel (or WaitGroup, Cond) operations, by identity
	what string   // "channel receive", "Cond.Wait"...
	At   string   // "file.go:12" of the operation
	Via  *callChain
	cond int // conditional steps down to it, as take.cond
	// freePath and freeClass: the lock a Cond.Wait releases while it
	// waits; freePath relative to the function, "" when not expressible
	// (then any lock of freeClass is taken for it).
	freePath, freeClass string
	// released: the caller's locks the function let go of before the
	// operation (paths relative to the function, sorted): a helper that
	// unlocks its caller's lock, waits, and locks it again
	// (waitForHandshakeLocked) does not wait holding it.
	released []string
}

func (b blockOp) describe() string {
	if b.Via == nil {
		return b.what
	}
	return b.what + " (in " + b.Via.text() + " at " + b.At + ")"
}

// frees reports whether h is the lock the operation releases while it
// waits.
func (b blockOp) frees(h Hold) bool {
	if h.Path != "" && slices.Contains(b.released, h.Path) {
		return true
	}
	if b.freeClass == "" {
		return false
	}
	if b.freePath != "" {
		return h.Path == b.freePath
	}
	return h.Class == b.freeClass
}

func (f *funcInfo) addBlock(b blockOp) {
	if !slices.ContainsFunc(b.ops, func(op chanOp) bool { return op.Key != "" }) {
		return // no peer can ever be found for it
	}
	for i, o := range f.blocks {
		if o.what == b.what && o.freePath == b.freePath && o.freeClass == b.freeClass && slices.Equal(o.released, b.released) && slices.EqualFunc(o.ops, b.ops, sameChanOp) {
			if b.cond < o.cond || b.cond == o.cond && b.Via.len() < o.Via.len() {
				f.blocks[i] = b
			}
			return
		}
	}
	if len(f.blocks) < maxTakes {
		f.blocks = append(f.blocks, b)
	}
}

// condFree returns the lock the Cond.Wait call instr releases.
func (w *walker) condFree(instr ssa.Instruction) (Hold, bool) {
	call, ok := instr.(ssa.CallInstruction)
	if !ok {
		return Hold{}, false
	}
	_, cond := lockop.CondMethod(call.Common())
	l, ok := w.e.objs.CondLock(cond)
	if !ok {
		return Hold{}, false
	}
	h, ok := w.lockHold(l, false, instr.Pos())
	return h, ok && h.Class != ""
}

// callBlocks adds to the summary, as blocking at the call, what the
// callee t blocks on, and reports the locks held in s across it.
func (w *walker) callBlocks(t *target, sum *funcInfo, pos token.Pos, s State) {
	if len(sum.blocks) == 0 {
		return
	}
	name := w.e.funcName(t.fn)
	step := w.condStep()
	if !t.exact {
		step++ // one candidate of several: it may not run
	}
	w.addBlocks(t, sum.blocks, step, pos, s, func(b blockOp) *callChain { return b.Via.push(name) })
}

// addBlocks adds to the summary the operations bs of callee t, step
// conditional steps away and reached through chain, as blocking at pos,
// and reports the locks held in s across them.
func (w *walker) addBlocks(t *target, bs []blockOp, step int, pos token.Pos, s State, chain func(blockOp) *callChain) {
	var blocks []blockOp
	for _, b := range bs {
		nb := b
		nb.Via, nb.cond, nb.freePath = chain(b), b.cond+step, ""
		if nb.cond > maxCond || nb.Via.len() > maxVia {
			continue
		}
		if b.freePath != "" {
			if p, ok := w.calleePath(t, b.freePath); ok {
				nb.freePath = p
			}
		}
		nb.released = s.outerRel
		for _, r := range b.released {
			if p, ok := w.calleePath(t, r); ok {
				nb.released = union(nb.released, []string{p})
			}
		}
		w.info.addBlock(nb)
		blocks = append(blocks, nb)
	}
	if w.report && len(blocks) > 0 {
		w.reportBlocked(pos, blocks, s)
	}
}

// sameChanOp: the same operation on the same channel.
func sameChanOp(a, b chanOp) bool { return a.Key == b.Key && a.Send == b.Send }
