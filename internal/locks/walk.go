package locks

import (
	"cmp"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// walker runs the forward dataflow over one function's CFG.
type walker struct {
	e      *engine
	fn     *ssa.Function
	info   *funcInfo
	report bool // emit findings and edges (in the final pass only)
	final  bool // the pass over the fixpoint's in-states: builds the summary
	entry  State
	in     []State
	seen   []bool
	// joinIns and joinBack are inState's scratch, reused from block to
	// block: allocated per join they were a tenth of the engine's garbage.
	joinIns  []State
	joinBack []bool
	rets     []retState
	// unlocked: paths this function unlocks somewhere. A lock held across
	// a loop's back-edge and never unlocked here is handed to another
	// goroutine to unlock, not re-locked by mistake.
	unlocked map[string]bool
	// unlockBlocks: the blocks unlocking each path (loopleak.go).
	unlockBlocks map[string][]*ssa.BasicBlock
	// doubled: paths locked again while held (a double lock, reported
	// as such): what is left held after it is not a second problem.
	doubled map[string]bool
	// unlockAt: the first unlock (by position) of each path unlocked
	// here, for findings that say where a lock was let go.
	unlockAt map[string]token.Pos
	// deferUnlocks caches deferredUnlock, asked at every loop-header join
	// of an element-indexed hold.
	deferUnlocks map[string]bool
	// toReturn caches heldToReturn's scan, per path.
	toReturn map[string]*releaseSites
	// blk is the block of the instruction being applied (of the Defer
	// for a deferred call); retBlocks the blocks ending in a return.
	blk       *ssa.BasicBlock
	at        ssa.Instruction // the instruction being applied
	retBlocks []*ssa.BasicBlock
	values    map[string]ssa.Instruction // by SSA name, for "v:" paths
	// maybeDefer: replaying a defer registered on some paths only (or
	// once per loop iteration): its unlock proves no double unlock.
	maybeDefer bool
	// deferFacts: what this return decides of a deferred literal's test
	// of a named result, for its summary (resultdefer.go).
	deferFacts []fact
	// deferredTake: applying a lock operation deferred by this function
	// (`defer mu.RLock()`, a slip for RUnlock).
	deferredTake bool
	targetBuf    []target // scratch for targets
	// dead: branches found impossible (cond.go), by predecessor and
	// successor index; nil while there is none.
	dead map[[2]int]bool
	// nilGuard: while a call of a func value is applied, the edges its
	// own nil test takes when it is nil (nilguard.go), nil otherwise.
	nilGuard map[[2]int]bool
	// sites: blocks of the takes conditional only by this function's own
	// branches, by lock (takesites.go; final pass).
	sites map[siteKey][]*ssa.BasicBlock
	// branchSteps caches branchStep by block.
	branchSteps map[*ssa.BasicBlock]int
	// occupancy: the channels whose len or cap the function reads, by
	// key (checksOccupancy).
	occupancy map[string]bool
	// guardedPubs: stores and map updates into a guarded field made with
	// its guards held exclusively, with those holds (see underGuard).
	guardedPubs map[ssa.Instruction][]Hold
	// releasers: results of calls that returned a lock held with the
	// function that releases it, by value (releasefunc.go).
	releasers map[ssa.Value]Hold
}

type retState struct {
	pos   token.Pos
	state State
	ret   *ssa.Return
	// implicit: the path falls off the end of the body; pos is then the
	// closing brace.
	implicit bool
	// handed: the locks the return hands back with their release
	// functions (releasefunc.go).
	handed []releaseFunc
}

// maxRounds bounds the fixpoint: the lattice is finite (paths come from
// instructions) and monotone, so this is only a guard against surprises.
const maxRounds = 64

func (e *engine) walk(fn *ssa.Function, info *funcInfo, entry State, report bool) {
	if len(fn.Blocks) == 0 {
		return
	}
	if entry.empty() && e.inert(fn) {
		info.resetBody()
		return
	}
	e.cur = fn
	w := &walker{e: e, fn: fn, info: info, entry: entry, in: make([]State, len(fn.Blocks)), unlocked: map[string]bool{}, doubled: map[string]bool{}, unlockAt: map[string]token.Pos{}, seen: make([]bool, len(fn.Blocks))}
	out := make([]State, len(fn.Blocks))
	done := make([]bool, len(fn.Blocks))
	order, acyclic := topoOrder(fn)
	if !acyclic {
		order = fn.Blocks // loops: iterate as before until nothing changes
	}
	for round := 0; round < maxRounds; round++ {
		changed := false
		for _, b := range order {
			s, ok := w.inState(b, out, done)
			if !ok {
				continue
			}
			w.in[b.Index], w.seen[b.Index] = s, true
			o := w.block(b, s)
			if !done[b.Index] || !o.equal(out[b.Index]) {
				out[b.Index], done[b.Index], changed = o, true, true
			}
		}
		// Without loops, one round in topological order sees every
		// block with all its predecessors done: the fixpoint.
		if !changed || acyclic {
			break
		}
	}
	// Final pass over the fixpoint's in-states: summaries and findings.
	w.report, w.final = report, true
	info.resetBody()
	for _, b := range fn.Blocks {
		if w.seen[b.Index] {
			w.block(b, w.in[b.Index])
		}
	}
	w.mergeSites()
	w.finishReturns()
}

// inState joins the out-states of b's predecessors reached so far.
func (w *walker) inState(b *ssa.BasicBlock, out []State, done []bool) (State, bool) {
	if b.Index == 0 {
		return w.entry, true
	}
	if b == w.fn.Recover {
		return State{}, true
	}
	ins, back := w.joinIns[:0], w.joinBack[:0]
	w.joinIns, w.joinBack = nil, nil // taken while in use
	defer func() { w.joinIns, w.joinBack = ins[:0], back[:0] }()
	for _, p := range b.Preds {
		if !done[p.Index] {
			continue
		}
		es, live := w.edgeState(p, b, out[p.Index])
		w.markDead(p, b, !live)
		if !live {
			continue // a branch that cannot be taken
		}
		es = w.phiMoves(p, b, es)
		isBack := b.Dominates(p)
		if isBack {
			es = es.withoutAliases() // the next turn compares new values
		}
		ins = append(ins, es)
		back = append(back, isBack)
	}
	if len(ins) == 0 {
		return State{}, false
	}
	s := dropMaybeTwins(join(ins, back))
	// A lock reached from a value computed in the loop (c = c.parent;
	// c.mu.Lock()) is another lock on the next iteration: not a re-lock.
	for _, h := range s.holds {
		if h.Loop && (w.definedIn(h.Path, b) || w.elementHandedOn(h, b)) {
			h.Loop = false
			s = s.with(h)
		}
	}
	return s, true
}

// definedIn reports whether path is rooted at an SSA value of the
// function defined in a block dominated by b (inside the loop b heads),
// or at a variable (a local captured by a closure) assigned there; or
// indexes with such a value (`ss[i].mu`, each element of a range in
// turn) and is unlocked by a defer: locking every element until return.
// An element's lock left held by a missing unlock stays a re-lock.
func (w *walker) definedIn(path string, b *ssa.BasicBlock) bool {
	if w.definedAt(w.rootValue(path), b) {
		return true
	}
	for _, idx := range indexValues(path) {
		if w.definedAt(w.valueNamed(idx), b) {
			return w.deferredUnlock(path)
		}
	}
	return false
}

// elementHandedOn reports whether h, the lock of an element indexed
// with a value the loop at b computes, was taken by a helper that hands
// it on in the value it returns, which the loop keeps (`out =
// append(out, b.Appender())`, the appender read-locking its block until
// Commit): each element's lock goes with its own value, no re-lock.
func (w *walker) elementHandedOn(h Hold, b *ssa.BasicBlock) bool {
	if !h.Inferred || !slices.ContainsFunc(indexValues(h.Path), func(idx string) bool { return w.definedAt(w.valueNamed(idx), b) }) {
		return false
	}
	for _, blk := range w.fn.Blocks {
		for _, instr := range blk.Instrs {
			if c, ok := instr.(*ssa.Call); ok && c.Pos() == h.Pos {
				return c.Call.Signature().Results().Len() > 0 && len(*c.Referrers()) > 0
			}
		}
	}
	return false
}

// indexValues lists the SSA value names a path indexes with ("t7" of
// "v:t3[v:t7].mu").
func indexValues(path string) []string {
	var out []string
	for rest := path; ; {
		i := strings.Index(rest, "[v:")
		if i < 0 {
			return out
		}
		rest = rest[i+3:]
		end := strings.IndexAny(rest, "].[")
		if end < 0 {
			return out
		}
		out = append(out, rest[:end])
	}
}

// definedAt reports whether v is defined inside the loop b heads (or is
// a variable assigned there).
func (w *walker) definedAt(v ssa.Instruction, b *ssa.BasicBlock) bool {
	if v == nil || v.Block() == nil {
		return false
	}
	if b.Dominates(v.Block()) {
		return true
	}
	if a, ok := v.(*ssa.Alloc); ok {
		if _, isStruct := a.Type().(*types.Pointer).Elem().Underlying().(*types.Struct); !isStruct {
			for _, r := range *a.Referrers() {
				if st, ok := r.(*ssa.Store); ok && st.Addr == a && b.Dominates(st.Block()) {
					return true
				}
			}
		}
	}
	return false
}

// rootValue returns the instruction a "v:" path is rooted at, or nil.
func (w *walker) rootValue(path string) ssa.Instruction {
	root, _ := rootOf(path)
	name, ok := strings.CutPrefix(root, "v:")
	if !ok {
		return nil
	}
	return w.valueNamed(name)
}

// valueNamed returns the instruction defining the value named name.
func (w *walker) valueNamed(name string) ssa.Instruction {
	if w.values == nil {
		w.values = map[string]ssa.Instruction{}
		for _, b := range w.fn.Blocks {
			for _, instr := range b.Instrs {
				if v, ok := instr.(ssa.Value); ok {
					w.values[v.Name()] = instr
				}
			}
		}
	}
	return w.values[name]
}

// edgeState refines the state leaving p towards b by the branch taken
// (cond.go), and on the branch where a TryLock succeeded the lock is held.
// live is false for a branch that cannot be taken.
func (w *walker) edgeState(p, b *ssa.BasicBlock, s State) (_ State, live bool) {
	ifi, ok := p.Instrs[len(p.Instrs)-1].(*ssa.If)
	if !ok || len(p.Succs) != 2 || p.Succs[0] == p.Succs[1] {
		return s, true
	}
	if s, live = w.branch(ifi, p.Succs[0] == b, s); !live {
		return s, false
	}
	cond, negated := ifi.Cond, false
	for {
		u, ok := cond.(*ssa.UnOp)
		if !ok || u.Op != token.NOT {
			break
		}
		cond, negated = u.X, !negated
	}
	if cmp, ok := cond.(*ssa.BinOp); ok && (cmp.Op == token.EQL || cmp.Op == token.NEQ) {
		if isNil, known := alwaysNilTest(cmp); known && isNil != ((p.Succs[0] == b) != negated) {
			return s, false // `if err := w.closeSegment(); err != nil` with an error that is never made
		}
		if (p.Succs[0] == b) != negated == (cmp.Op == token.EQL) {
			s = w.sameObject(cmp.X, cmp.Y, s)
		}
		return s, true
	}
	call, ok := cond.(*ssa.Call)
	if !ok {
		return s, true
	}
	op, lv := w.e.classify(call.Common())
	wrapped, isWrapper := w.wrapperTryHold(call)
	if op != lockop.TryLock && op != lockop.TryRLock && !isWrapper {
		return s, true
	}
	if (p.Succs[0] == b) == negated {
		return s, true // the failure branch
	}
	var h Hold
	if isWrapper && op != lockop.TryLock && op != lockop.TryRLock {
		h = wrapped
	} else {
		h = w.holdOf(lv, op.Shared(), call.Pos())
	}
	if old, held := s.find(h.Path); held && !old.Maybe {
		old.Extra++ // a successful re-entrant TryRLock: one more unlock due
		return s.with(old), true
	}
	h.Try = true
	return s.with(h), true
}

// sameObject is s on a branch where pointers x and y are equal: a lock
// held through one is held through the other too (`if e != locked {
// panic(...) }` makes e.mu locked.mu, gVisor's AssertLockHeld). The copy
// is held exactly where the comparison holds (Try: no leak, no
// inconsistent return, no undeclared acquire of its own).
func (w *walker) sameObject(x, y ssa.Value, s State) State {
	if _, ok := x.Type().Underlying().(*types.Pointer); !ok || !types.Identical(x.Type(), y.Type()) || nilConstant(x) || nilConstant(y) {
		return s // e == nil names no lock
	}
	px, py := pathOf(w.fn, x), pathOf(w.fn, y)
	if px == "" || py == "" || px == py {
		return s
	}
	for _, h := range s.holds {
		for _, pair := range [][2]string{{px, py}, {py, px}} {
			rest, ok := pathUnder(h.Path, pair[0])
			if !ok || h.Maybe {
				continue
			}
			if _, held := s.find(pair[1] + rest); !held {
				c := h
				c.Path, c.Try, c.alias = pair[1]+rest, true, true
				s = s.with(c)
			}
		}
	}
	return s
}

func (w *walker) block(b *ssa.BasicBlock, s State) State {
	for _, instr := range b.Instrs {
		w.blk, w.at = b, instr
		s = w.instr(instr, s)
	}
	return s
}

// holdOf describes the lock value lv as a new hold.
func (w *walker) holdOf(lv ssa.Value, shared bool, pos token.Pos) Hold {
	if types.IsInterface(lv.Type()) {
		if h, ok := w.lockerHold(lv, shared, pos); ok {
			return h
		}
	}
	h := Hold{Path: w.e.lockPath(w.fn, lv), Shared: shared, Pos: pos, Name: "lock", Opaque: types.IsInterface(lv.Type())}
	if fa, ok := lv.(*ssa.FieldAddr); ok {
		h.Sub = w.e.objs.Via(fa.X)
		w.e.noteSubVar(h.Sub, fa.X)
		h.elemOf = w.elemPath(fa.X)
		h.sym = symSourceOf(w.fn, fa.X)
	} else {
		h.sym = symSourceOf(w.fn, lv)
	}
	h.Obj = w.e.objs.Origin(w.fn, container(lv))
	if v := cmp.Or(lockop.ClassOf(lv), lockop.ReturnedClass(lv)); v != nil {
		if l := w.e.objs.PointedLock(v); l != nil {
			v = l // a pointer field that always points to another object's lock
		}
		h.Class, h.Name = lockop.ClassKey(v), lockop.ShortName(v)
		w.e.classVars[h.Class] = v
		if lockop.InWrapper(v) && h.Sub != "" && !strings.HasPrefix(h.Sub, "ptr:") {
			h.Name = shortClass(h.Sub) // "Store.mu", not "RWMutex.RWMutex"
		}
	} else if c := lockop.ElementOf(lv); c != nil {
		h.Class, h.Name = lockop.ElemKey(c), lockop.ElemName(c)
		if holder := lockop.ElementHolder(lv); holder != nil {
			h.Sub = w.e.objs.Via(holder)
		}
	} else if class, name := w.e.localClass(w.fn, lv); class != "" {
		h.Class, h.Name = class, name
	} else {
		h.Name = sourceName(lv)
	}
	h.Keyed = h.Class != "" && lockop.Keyed(lv)
	return h
}

// container is the value whose object holds the memory addr points into:
// addr with its value-field selections stripped.
func container(addr ssa.Value) ssa.Value {
	for range 16 {
		fa, ok := addr.(*ssa.FieldAddr)
		if !ok {
			return addr
		}
		addr = fa.X
	}
	return addr
}

// private reports whether h is the lock of an object this function
// created and has not yet published at the instruction being applied.
func (w *walker) private(h Hold) bool {
	return h.Obj != nil && w.e.objs.Private(h.Obj, w.at)
}

// sourceName names a lock without a class (a local, a parameter) as the
// source does, for messages.
func sourceName(v ssa.Value) string {
	for range 8 {
		switch x := v.(type) {
		case *ssa.UnOp:
			v = x.X
			continue
		case *ssa.ChangeType:
			v = x.X
			continue
		case *ssa.MakeInterface:
			v = x.X
			continue
		case *ssa.Parameter:
			return x.Name()
		case *ssa.FreeVar:
			return x.Name()
		case *ssa.Alloc:
			if x.Comment != "" {
				return x.Comment
			}
		}
		break
	}
	return unnamed
}

// unnamed is sourceName's name for a value it cannot name.
const unnamed = "lock"
